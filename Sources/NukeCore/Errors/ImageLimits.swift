/// Bounds on what a decoder may allocate for one image.
///
/// Decoders check them after reading the header and before allocating any pixel memory, so
/// a small hostile file that declares a huge image fails fast with
/// ``ImageCodecError/Code-swift.struct/limitExceeded`` instead of exhausting memory.
///
/// The defaults admit any camera photograph (the largest medium-format frames, 151
/// megapixels, are 14,204 × 10,652) and cap one decode at 1 GiB of pixels. Services that take uploads from
/// strangers usually lower them; tests and trusted batch jobs may use ``unlimited``.
public struct ImageLimits: Sendable, Hashable {
    /// Maximum `width × height` of one frame. Default: 200,000,000.
    public var maxPixelCount: Int
    /// Maximum width or height. Default: 32,768.
    public var maxDimension: Int
    /// Maximum number of frames in an animated image. Default: 1,000.
    public var maxFrameCount: Int
    /// Maximum bytes of decoded pixels for the whole image, all frames. Default: 1 GiB.
    public var maxDecodedBytes: Int
    /// Maximum number of progressive scans a decoder processes (a JPEG can hold thousands of
    /// tiny scans, each costing a full pass). Default: 100.
    public var maxScanCount: Int
    /// Maximum bytes of decompressed metadata (text chunks, ICC profiles). Default: 8 MiB.
    public var maxMetadataBytes: Int

    public init(
        maxPixelCount: Int = 200_000_000,
        maxDimension: Int = 32_768,
        maxFrameCount: Int = 1_000,
        maxDecodedBytes: Int = 1 << 30,
        maxScanCount: Int = 100,
        maxMetadataBytes: Int = 8 << 20
    ) {
        self.maxPixelCount = maxPixelCount
        self.maxDimension = maxDimension
        self.maxFrameCount = maxFrameCount
        self.maxDecodedBytes = maxDecodedBytes
        self.maxScanCount = maxScanCount
        self.maxMetadataBytes = maxMetadataBytes
    }

    /// The defaults described above.
    public static let `default` = ImageLimits()

    /// No limits beyond what the codecs themselves impose.
    public static let unlimited = ImageLimits(
        maxPixelCount: .max, maxDimension: .max, maxFrameCount: .max,
        maxDecodedBytes: .max, maxScanCount: .max, maxMetadataBytes: .max
    )

    /// Checks a header's dimensions against the limits.
    ///
    /// Call it after the header is read and before pixel memory is allocated.
    /// - Parameters:
    ///   - width: The width the header declares.
    ///   - height: The height the header declares.
    ///   - bytesPerPixel: Bytes per pixel of the decoded output.
    ///   - frameCount: The number of frames to decode.
    ///   - format: The format, for the error.
    ///   - codec: The codec, for the error.
    /// - Throws: ``ImageCodecError`` with code `.limitExceeded` (or `.corrupt` for a zero or
    ///   negative dimension).
    public func check(
        width: Int,
        height: Int,
        bytesPerPixel: Int,
        frameCount: Int = 1,
        format: ImageType?,
        codec: String?
    ) throws(ImageCodecError) {
        func fail(_ code: ImageCodecError.Code, _ message: String) -> ImageCodecError {
            ImageCodecError(code, stage: .header, format: format, codec: codec, message: message)
        }
        guard width > 0, height > 0 else {
            throw fail(.corrupt, "invalid image size \(width)×\(height)")
        }
        guard width <= maxDimension, height <= maxDimension else {
            throw fail(.limitExceeded, "image size \(width)×\(height) exceeds the maximum dimension \(maxDimension)")
        }
        let (pixels, o1) = width.multipliedReportingOverflow(by: height)
        guard !o1, pixels <= maxPixelCount else {
            throw fail(.limitExceeded, "image size \(width)×\(height) exceeds the maximum pixel count \(maxPixelCount)")
        }
        guard frameCount <= maxFrameCount else {
            throw fail(.limitExceeded, "\(frameCount) frames exceed the maximum frame count \(maxFrameCount)")
        }
        let (frameBytes, o2) = pixels.multipliedReportingOverflow(by: bytesPerPixel)
        let (total, o3) = frameBytes.multipliedReportingOverflow(by: max(frameCount, 1))
        guard !o2, !o3, total <= maxDecodedBytes else {
            throw fail(.limitExceeded, "decoding \(width)×\(height) needs more than the maximum \(maxDecodedBytes) bytes")
        }
    }
}
