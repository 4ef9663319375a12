internal import CPNGShim
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit
import NukePixels

/// One progressive decode: libpng's progressive reader, the pixels it writes, and how far
/// it got.
///
/// Not `Sendable`: ``ImageDecoders/PNG`` keeps it in a `Mutex`. It owns the libpng reader
/// (freed in `deinit`) and the pixel array; the array's address is handed to the shim for
/// the duration of one `nukepng_decoder_feed` call only.
final class PNGDecodingSession {
    /// The output geometry, once the header passed the limits.
    struct Header {
        var width: Int
        var height: Int
        var pixelFormat: PixelFormat
        var bytesPerRow: Int
        var isInterlaced: Bool
    }

    /// Input is fed in slices of this size, with a cancellation check between them.
    static let sliceSize = 64 * 1024
    /// Slices when decoding to size through the row ring: deflate expands a byte to at most
    /// 1,032 bytes, so one slice yields at most ``ringSliceSize`` × 1,032 bytes of rows — the
    /// ring holds that many (about 4 MiB of rows, whatever the image size).
    static let ringSliceSize = 4096
    static let deflateMaximumExpansion = 1032
    /// Slices for interlaced previews: feeding stops after the slice that completes a pass,
    /// so that each pass gets its own preview even when one chunk holds several. libpng
    /// decodes a whole slice at once, so passes that end within one slice are shown together;
    /// small images, whose early passes are a few bytes each, get smaller slices.
    static func passSliceSize(for header: Header) -> Int {
        header.bytesPerRow * header.height <= 1 << 20 ? 64 : 1024
    }

    private let handle: OpaquePointer
    /// The decode request: limits, allocator, bit depth, strictness, target size and plan.
    private let configuration: ImageDecodingContext
    /// The size of the complete input, when the decode has all of it (for
    /// ``ImageLimits/maxDecodedBytesPerInputByte``).
    private var inputByteCount: Int? { configuration.isCompleted ? configuration.data.count : nil }

    /// How many bytes libpng has seen.
    private(set) var fedCount = 0

    private(set) var header: Header?
    /// The decoded pixels, `bytesPerRow × height`; empty until the header is ready. When
    /// decoding to size with a ring (``ringRows`` > 0), the last ``ringRows`` rows only.
    private var pixels = Bitmap.empty
    /// Decode to size of a non-interlaced image: rows go through a ring of this many rows into
    /// the core's ``destination``, which resamples them, so the full-size image never exists.
    /// 0: the whole image is kept (the core's driver resamples it).
    private var ringRows = 0
    private var rowsDrained = 0
    private var destination: ImageRowDestination?
    /// `true` when rows libpng has not written yet are known to be zero.
    private var undecodedRowsAreZero = false
    /// `true` once an interlaced image was fed without filling Adam7 blocks: its rows are
    /// not all written before the last pass, so no interlaced preview can be made.
    private var skippedBlockFill = false

    private(set) var isFinished = false
    private var failure: ImageCodecError?
    private var finalContainer: ImageContainer?

    /// Progress at the last preview: pass number (interlaced) or row count.
    private var lastPreviewProgress = 0

    init(configuration: ImageDecodingContext) throws(ImageCodecError) {
        self.configuration = configuration
        let limits = configuration.limits
        var options = nukepng_decoder_options(
            max_dimension: UInt64(clamping: limits.maxDimension),
            max_pixel_count: UInt64(clamping: limits.maxPixelCount),
            max_decoded_bytes: UInt64(clamping: limits.maxDecodedBytes),
            max_metadata_bytes: UInt64(clamping: limits.maxMetadataBytes),
            keep_16_bit: configuration.prefersHighBitDepth ? 1 : 0
        )
        guard let handle = nukepng_decoder_create(&options) else {
            throw PNGLibrary.error(.internalFailure, .header, "cannot create a libpng reader (out of memory)"
            )
        }
        self.handle = handle
    }

    deinit {
        nukepng_decoder_destroy(handle)
    }

    // MARK: - Feeding

    /// Feeds libpng `bytes`, which follow the bytes fed before.
    ///
    /// For interlaced previews feeding stops once an Adam7 pass completes; the caller feeds the
    /// rest (with any newer bytes) in a later call.
    ///
    /// - Parameter forPreviews: Allocate zeroed pixels, so that previews show undecoded rows
    ///   as zero (transparent black), and fill interlaced images' Adam7 blocks. A decode
    ///   of the complete data skips both.
    /// - Returns: How many of the bytes were consumed: all of them, unless a pass completed
    ///   (or libpng saw `IEND`: bytes after it are ignored and count as consumed).
    /// - Throws: The decode's error: malformed data, a limit, cancellation.
    func feed(_ bytes: Data, forPreviews: Bool) throws(ImageCodecError) -> Int {
        if let failure { throw failure }
        guard !isFinished else { return bytes.count }
        guard !bytes.isEmpty else { return 0 }
        if !forPreviews { skippedBlockFill = true }
        var offset = 0
        let status: Result<Void, ImageCodecError> = bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return .success(()) }
            defer { fedCount += offset }
            while offset < raw.count, !isFinished {
                if configuration.isCancelled {
                    return .failure(error(.cancelled, "decoding was cancelled"))
                }
                let byPass = forPreviews && header?.isInterlaced == true
                if byPass, Int(nukepng_decoder_progress(handle).passes_done) > lastPreviewProgress {
                    break  // A pass completed and awaits its preview: the rest waits for the next call.
                }
                let slice = ringRows > 0 ? Self.ringSliceSize
                    : byPass ? header.map(Self.passSliceSize) ?? Self.sliceSize : Self.sliceSize
                let length = min(slice, raw.count - offset)
                var consumed = 0
                let status: nuke_status
                if header != nil {
                    status = pixels.withUnsafeMutableBytes { buffer in
                        nukepng_decoder_feed(
                            handle, base + offset, length,
                            buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count,
                            forPreviews ? 1 : 0, &consumed
                        )
                    }
                } else {
                    status = nukepng_decoder_feed(handle, base + offset, length, nil, 0, forPreviews ? 1 : 0, &consumed)
                }
                offset += consumed
                if ringRows > 0, status == NUKE_STATUS_NEED_MORE || status == NUKE_STATUS_OK { drainRing() }
                switch status {
                case NUKE_STATUS_NEED_MORE:
                    continue
                case NUKE_STATUS_PAUSED:
                    do throws(ImageCodecError) {
                        try prepareHeader(zeroFill: forPreviews)
                    } catch {
                        failure = error
                        return .failure(error)
                    }
                case NUKE_STATUS_OK:
                    isFinished = true
                    offset = raw.count  // Bytes after IEND are ignored.
                default:
                    let failure = libpngError(status)
                    self.failure = failure
                    return .failure(failure)
                }
            }
            return .success(())
        }
        try status.get()
        return offset
    }

    /// Reads the output geometry, checks the limits and allocates the pixels.
    private func prepareHeader(zeroFill: Bool) throws(ImageCodecError) {
        var raw = nukepng_header()
        guard nukepng_decoder_header(handle, &raw) != 0 else {
            throw error(.internalFailure, "the header was reported ready but is not")
        }
        let channels = PixelFormat.Channels(rawValue: Int(raw.channels)) ?? .rgba
        let format = PixelFormat(channels: channels, bitsPerChannel: raw.bit_depth == 16 ? 16 : 8)
        let header = Header(
            width: Int(raw.width), height: Int(raw.height), pixelFormat: format,
            bytesPerRow: raw.row_bytes, isInterlaced: raw.interlaced != 0
        )
        try configuration.limits.check(
            width: header.width, height: header.height, bytesPerPixel: format.bytesPerPixel,
            format: .png, codec: PNGLibrary.codecName, inputByteCount: inputByteCount
        )
        // PNG has no reduction of its own: the core resamples it, row by row when it can.
        var rows = header.height
        let size = ImageSize(width: header.width, height: header.height)
        if ImageRowDestination.resamples(size: size, context: configuration), !header.isInterlaced, !zeroFill {
            // Decode to size while decoding: a ring of rows into the core's destination.
            let ringBytes = Self.ringSliceSize * Self.deflateMaximumExpansion
            rows = min(header.height, max(2, ringBytes / max(header.bytesPerRow, 1) + 2))
            ringRows = rows
            nukepng_decoder_set_row_ring(handle, UInt32(rows))
            destination = try ImageRowDestination(size: size, pixelFormat: format, alphaMode: format.hasAlpha ? .straight : .none,
                                                  context: configuration)
        }
        // Unless zero-filled, every byte is written by libpng before a complete image is returned.
        pixels = try Bitmap(
            width: header.width, height: rows, pixelFormat: format, bytesPerRow: header.bytesPerRow,
            storage: configuration.allocator.allocate(byteCount: header.bytesPerRow * rows, zeroed: zeroFill)
        )
        undecodedRowsAreZero = zeroFill
        self.header = header
    }

    /// Hands the rows libpng wrote to the ring since the last call to the destination.
    private func drainRing() {
        guard let destination, let header else { return }
        let done = Int(nukepng_decoder_progress(handle).rows_done)
        guard done > rowsDrained else { return }
        pixels.withUnsafeBytes { ring in
            var row = rowsDrained
            while row < done {
                // A run of consecutive slots, up to the end of the ring.
                let slot = row % ringRows
                let count = min(done - row, ringRows - slot)
                let start = slot * header.bytesPerRow
                destination.push(rows: UnsafeRawBufferPointer(rebasing: ring[start..<(start + count * header.bytesPerRow)]),
                                 count: count, bytesPerRow: header.bytesPerRow)
                row += count
            }
        }
        rowsDrained = done
        nukepng_decoder_set_rows_drained(handle, UInt32(done))
    }

    // MARK: - Results

    /// A preview of what is decoded so far, or `nil` when nothing new arrived since the last.
    ///
    /// Interlaced: once per newly completed Adam7 pass, never before pass 1 is complete;
    /// libpng's "blocky" display mode has filled every pixel's Adam7 block with the pass's
    /// pixel, so the preview is the whole image at the pass's resolution. Non-interlaced:
    /// the rows decoded so far; the rows below are zero (transparent black with alpha).
    func preview() -> ImageContainer? {
        guard failure == nil, let header else { return nil }
        if isFinished {
            let complete = header.isInterlaced ? 7 : header.height
            guard lastPreviewProgress < complete, var preview = try? finish() else { return nil }
            lastPreviewProgress = complete
            preview.isPreview = true
            preview.userInfo[header.isInterlaced ? .scanNumberKey : .rowCountKey] = complete
            return preview
        }
        let progress = nukepng_decoder_progress(handle)
        var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [
            .bytesConsumedKey: fedCount,
            .isProgressiveKey: header.isInterlaced,
        ]
        if header.isInterlaced {
            let passes = Int(progress.passes_done)
            guard passes >= 1, passes > lastPreviewProgress, !skippedBlockFill else { return nil }
            lastPreviewProgress = passes
            userInfo[.scanNumberKey] = passes
        } else {
            let rows = Int(progress.rows_done)
            guard rows > lastPreviewProgress else { return nil }
            lastPreviewProgress = rows
            userInfo[.rowCountKey] = rows
            if !undecodedRowsAreZero {
                let start = rows * header.bytesPerRow
                pixels.withUnsafeMutableBytes { buffer in
                    guard let base = buffer.baseAddress, start < buffer.count else { return }
                    (base + start).initializeMemory(as: UInt8.self, repeating: 0, count: buffer.count - start)
                }
                undecodedRowsAreZero = true
            }
        }
        // Shares the pixel storage: the next feed copies it only if the caller still holds it.
        let bitmap = pixels
        return ImageContainer(image: makeImage(bitmap), type: .png, isPreview: true, userInfo: userInfo)
    }

    /// The complete image.
    ///
    /// - Throws: `.incomplete` when the data ended before libpng saw IEND.
    func finish() throws(ImageCodecError) -> ImageContainer {
        if let finalContainer { return finalContainer }
        if let failure { throw failure }
        guard isFinished, let header else {
            let failure = incompleteError()
            throw failure
        }
        var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [.bytesConsumedKey: fedCount, .isProgressiveKey: header.isInterlaced]
        if let warnings {
            if configuration.isStrict {
                let failure = error(.corrupt, "strict decoding refuses what libpng only warned about: \(warnings)")
                self.failure = failure
                throw failure
            }
            userInfo[.warningsKey] = warnings
        }
        // Streamed through the ring; otherwise (interlaced, or decoded for previews) the core's
        // driver finishes the decode to size from the stored size.
        let bitmap = destination?.finish().bitmap ?? pixels
        if bitmap.width != header.width || bitmap.height != header.height {
            userInfo[.originalSizeKey] = ImageSize(width: header.width, height: header.height)
        }
        pixels = .empty
        destination = nil
        let container = ImageContainer(image: makeImage(bitmap), type: .png, userInfo: userInfo)
        finalContainer = container
        return container
    }

    /// Wraps pixels with the metadata libpng has read so far.
    private func makeImage(_ bitmap: Bitmap) -> Image {
        var colorInfo = ColorInfo()
        var bytes: UnsafePointer<UInt8>?
        var size = 0
        if nukepng_decoder_icc(handle, &bytes, &size) != 0, let bytes {
            colorInfo.iccProfile = Data(bytes: bytes, count: size)
        }
        var gamma = 0.0
        if nukepng_decoder_gamma(handle, &gamma) != 0 { colorInfo.gamma = gamma }
        var intent: Int32 = 0
        if nukepng_decoder_srgb_intent(handle, &intent) != 0 { colorInfo.sRGBIntent = Int(intent) }
        var exif: Data?
        var orientation = ImageOrientation.up
        if nukepng_decoder_exif(handle, &bytes, &size) != 0, let bytes {
            let block = Data(bytes: bytes, count: size)
            exif = block
            orientation = ImageOrientation(exif: block) ?? .up
        }
        return Image(bitmap: bitmap, orientation: orientation, colorInfo: colorInfo, exif: exif)
    }

    // MARK: - Errors

    private func error(_ code: ImageCodecError.Code, _ message: String) -> ImageCodecError {
        PNGLibrary.error(code, header == nil ? .header : .decoding, message)
    }

    /// The error for a failing status of `nukepng_decoder_feed`, with libpng's message.
    private func libpngError(_ status: nuke_status) -> ImageCodecError {
        PNGLibrary.error(status: status, diagnostics: nukepng_decoder_diagnostics(handle).pointee, stage: header == nil ? .header : .decoding)
    }

    /// What libpng tolerated so far (a bad ancillary CRC, data after the image's compressed
    /// stream...), or `nil`.
    var warnings: ImageDecodingWarnings? { nukepng_decoder_diagnostics(handle).pointee.warnings }

    private func incompleteError() -> ImageCodecError {
        guard let header else {
            return error(.incomplete, fedCount == 0 ? "no data" : "the data ends before the first image data (\(fedCount) bytes)")
        }
        let progress = nukepng_decoder_progress(handle)
        if header.isInterlaced {
            return error(.incomplete, "the data ends before IEND, with \(progress.passes_done) of 7 Adam7 passes decoded")
        }
        return error(.incomplete, "the data ends before IEND, with \(progress.rows_done) of \(header.height) rows decoded")
    }
}
