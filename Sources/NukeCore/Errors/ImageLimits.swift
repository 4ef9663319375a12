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
    /// Maximum decoded bytes per byte of input, checked when a decode has the complete input:
    /// a 662-byte file that declares 6,973 × 8,193 pixels (171 MB, 258,000 bytes per input byte) is
    /// a decompression bomb, while real photos need 5–50 and flat synthetic graphics a few thousand.
    /// Default: no ceiling.
    public var maxDecodedBytesPerInputByte: Int
    /// The codecs' limits (``Key``) set explicitly, by name.
    public private(set) var codecValues: [String: Int] = [:]
    /// Which of a ``Key``'s values the codecs' limits not set explicitly have: ``default``'s and
    /// limits made with the initialiser have `.default`, ``untrusted`` `.untrusted`, ``unlimited``
    /// `.unlimited`.
    public var preset = Preset.default

    /// Which of a ``Key``'s values a key not set explicitly has.
    public enum Preset: Int, Sendable, Hashable {
        /// ``Key/defaultValue``.
        case `default`
        /// ``Key/untrustedValue``.
        case untrusted
        /// `Int.max`.
        case unlimited
    }

    /// Creates limits; each defaults to the value of ``ImageLimits/default``.
    public init(
        maxPixelCount: Int = 200_000_000,
        maxDimension: Int = 32_768,
        maxFrameCount: Int = 1_000,
        maxDecodedBytes: Int = 1 << 30,
        maxScanCount: Int = 100,
        maxMetadataBytes: Int = 8 << 20,
        maxDecodedBytesPerInputByte: Int = .max
    ) {
        self.maxPixelCount = maxPixelCount
        self.maxDimension = maxDimension
        self.maxFrameCount = maxFrameCount
        self.maxDecodedBytes = maxDecodedBytes
        self.maxScanCount = maxScanCount
        self.maxMetadataBytes = maxMetadataBytes
        self.maxDecodedBytesPerInputByte = maxDecodedBytesPerInputByte
    }

    /// The defaults described above.
    public static let `default` = ImageLimits()

    /// For input from strangers (uploads): small enough that a service decoding several at once
    /// stays within memory, strict enough that a hostile file fails fast. What each costs:
    ///
    /// | limit | value | rejects |
    /// |---|---|---|
    /// | pixels | 40 MP | camera frames above 40 MP (a 45 MP full-frame raw export, medium format) |
    /// | dimension | 16,384 | panoramas and long screenshots wider or taller |
    /// | frames | 100 | longer animations (a 10 s GIF at 15 fps passes) |
    /// | decoded bytes | 256 MiB | all frames together above it |
    /// | scans | 16 | progressive JPEGs with more scans (encoders write 10 or fewer) |
    /// | metadata | 1 MiB | ICC profiles and text chunks above it (real profiles are under 1 MiB) |
    /// | per input byte | 4,096 | files whose pixels expand more than 4,096 times: very large single-colour JPEGs and GIFs (a PNG cannot: deflate expands at most 1,032 times) |
    ///
    /// Codecs' own limits (``Key``) take their untrusted values: NukeSVG's, for instance, refuse
    /// documents of more than 100,000 elements once expanded or about 2 s of drawing.
    ///
    /// Pair it with ``ImageDecodingContext/isStrict`` to also refuse data the codecs only warn about.
    public static let untrusted = {
        var limits = ImageLimits(
            maxPixelCount: 40_000_000, maxDimension: 16_384, maxFrameCount: 100,
            maxDecodedBytes: 256 << 20, maxScanCount: 16, maxMetadataBytes: 1 << 20, maxDecodedBytesPerInputByte: 4_096
        )
        limits.preset = .untrusted
        return limits
    }()

    /// No limits beyond what the codecs themselves impose.
    public static let unlimited = {
        var limits = ImageLimits(
            maxPixelCount: .max, maxDimension: .max, maxFrameCount: .max,
            maxDecodedBytes: .max, maxScanCount: .max, maxMetadataBytes: .max, maxDecodedBytesPerInputByte: .max
        )
        limits.preset = .unlimited
        return limits
    }()

    /// A limit a codec declares and checks itself, beyond the core's (NukeSVG's elements once
    /// references are expanded, its drawing work, its render time), with its value in the
    /// ``default`` and ``untrusted`` presets (``unlimited``: `Int.max`). NukeIsolation carries the
    /// preset and the values set to its helpers, whether or not the host links the codec.
    public struct Key: Sendable, Hashable {
        /// A unique name (`"svg-elements"`).
        public var name: String
        /// The value in ``ImageLimits/default`` and in limits made with ``ImageLimits/init(maxPixelCount:maxDimension:maxFrameCount:maxDecodedBytes:maxScanCount:maxMetadataBytes:maxDecodedBytesPerInputByte:)``.
        public var defaultValue: Int
        /// The value in ``ImageLimits/untrusted``.
        public var untrustedValue: Int

        /// Declares a limit.
        public init(name: String, defaultValue: Int, untrustedValue: Int) {
            self.name = name
            self.defaultValue = defaultValue
            self.untrustedValue = untrustedValue
        }
    }

    /// A codec's limit: the value set, else the key's value for the preset these limits come from.
    public subscript(key: Key) -> Int {
        get {
            if let value = codecValues[key.name] { return value }
            switch preset {
            case .default: return key.defaultValue
            case .untrusted: return key.untrustedValue
            case .unlimited: return .max
            }
        }
        set { codecValues[key.name] = newValue }
    }

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
    ///   - inputByteCount: The size of the complete input, when the decode has all of it: checked
    ///     against ``maxDecodedBytesPerInputByte``. `nil` (the default) skips that check.
    /// - Throws: ``ImageCodecError`` with code `.limitExceeded` (or `.corrupt` for a zero or
    ///   negative dimension).
    public func check(
        width: Int,
        height: Int,
        bytesPerPixel: Int,
        frameCount: Int = 1,
        format: ImageType?,
        codec: String?,
        inputByteCount: Int? = nil
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
        try checkExpansion(decodedBytes: total, inputByteCount: inputByteCount, format: format, codec: codec)
    }

    /// Checks decoded bytes against ``maxDecodedBytesPerInputByte``.
    ///
    /// - Parameters:
    ///   - decodedBytes: The bytes the header declares (all frames, at full size).
    ///   - inputByteCount: The size of the complete input; `nil` when the decode does not have all
    ///     of it yet (the check is then skipped).
    ///   - format: The format, for the error.
    ///   - codec: The codec's description, for the error.
    /// - Throws: ``ImageCodecError`` `.limitExceeded`.
    public func checkExpansion(decodedBytes: Int, inputByteCount: Int?, format: ImageType?, codec: String?) throws(ImageCodecError) {
        guard let inputByteCount, inputByteCount > 0, maxDecodedBytesPerInputByte != .max else { return }
        let (allowed, overflow) = inputByteCount.multipliedReportingOverflow(by: maxDecodedBytesPerInputByte)
        guard overflow || decodedBytes <= allowed else {
            throw ImageCodecError(
                .limitExceeded, stage: .header, format: format, codec: codec,
                message: "\(decodedBytes) decoded bytes from \(inputByteCount) bytes of input is \(decodedBytes / inputByteCount) per input byte, more than the maximum \(maxDecodedBytesPerInputByte) (a decompression bomb?)"
            )
        }
    }
}
