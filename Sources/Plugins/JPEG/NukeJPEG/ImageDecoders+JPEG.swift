#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import Synchronization

extension ImageDecoders {
    /// Decodes JPEG with libjpeg-turbo: baseline, progressive and arithmetic-coded files,
    /// grayscale (to ``PixelFormat/gray8``), YCbCr and RGB (to ``PixelFormat/rgb8``), and
    /// CMYK/YCCK (converted to ``PixelFormat/rgb8``), with progressive previews and DCT-scaled
    /// decoding.
    ///
    /// Add the product to an app target and the decoder registers itself with
    /// ``ImageDecoderRegistry/shared``:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukeJPEG", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Pixels equal `djpeg -pnm` (accurate integer IDCT, fancy upsampling, block smoothing);
    /// with a ``ImageDecodingContext/targetSize`` they equal `djpeg -scale N/8` for the
    /// smallest N that still covers it (the container's userInfo has
    /// ``ImageContainer/UserInfoKey/decodeScaleKey`` and
    /// ``ImageContainer/UserInfoKey/originalSizeKey``). The EXIF orientation, the EXIF block
    /// and the ICC profile are kept; pixels are not rotated.
    ///
    /// Progressive decoding: ``decodePartiallyDownloadedData(_:)`` feeds libjpeg only the
    /// new bytes and returns a preview each time a scan of a progressive (multi-scan) file is
    /// complete — a scan is complete when the next SOS marker or the EOI marker has arrived.
    /// Each call returns at most one preview, of the next scan not yet shown; when one chunk
    /// completed several scans, calling again with the same data returns the next (and `nil`
    /// once none is pending), which ``ImageDecodingSession`` does. A 10-scan file fed in chunks
    /// therefore gives 9 previews before its last bytes, and a 10th when the EOI arrives in
    /// partial data. Baseline files give no previews but are decoded as the bytes
    /// arrive, so ``decode(_:)`` on the same instance only finishes the work. The final image
    /// equals a one-shot decode. libjpeg's arithmetic decoder cannot suspend, so arithmetic-coded
    /// data is shown to libjpeg only up to the last SOS or EOI marker received (previews come
    /// all the same).
    ///
    /// Limits: the declared size is checked against ``ImageLimits`` right after the header;
    /// the pixel buffer plus, for multi-scan files, libjpeg's coefficient buffer must fit in
    /// ``ImageLimits/maxDecodedBytes`` (which also bounds libjpeg's own allocations), and
    /// files with more than ``ImageLimits/maxScanCount`` scans are refused.
    ///
    /// 12-bit and lossless JPEGs are not supported by the system libjpeg-turbo 2.1.5 and fail
    /// with `.unsupported`.
    public final class JPEG: ImageDecoderRegistering, Sendable {
        /// The context the decoder was created with: limits, target size, cancellation.
        public let context: ImageDecodingContext
        private let adapter: IncrementalDecoderAdapter

        /// Creates a decoder.
        ///
        /// - Parameter context: Limits, target size and cancellation; the data in it is not used.
        public init(context: ImageDecodingContext = ImageDecodingContext(data: Data())) {
            self.context = context
            adapter = IncrementalDecoderAdapter { JPEGIncrementalDecoder(context: context) }
        }

        /// Creates a decoder when the data starts with a JPEG signature.
        public convenience init?(data: Data, context: ImageDecodingContext) {
            guard Self.isJPEG(data, context: context) else { return nil }
            self.init(context: context)
        }

        /// Creates a decoder for a partially downloaded JPEG.
        public convenience init?(partiallyDownloadedData data: Data, context: ImageDecodingContext) {
            guard Self.isJPEG(data, context: context) else { return nil }
            self.init(context: context)
        }

        static func make(_ context: ImageDecodingContext) -> JPEG? {
            isJPEG(context.data, context: context) ? JPEG(context: context) : nil
        }

        static func isJPEG(_ data: Data, context: ImageDecodingContext) -> Bool {
            if context.type == .jpeg { return true }
            return data.count >= 3 && data.starts(with: [0xFF, 0xD8, 0xFF])
        }

        /// Decodes the complete image.
        ///
        /// After partial calls on this instance, feeds only the bytes not yet seen and
        /// finishes the incremental decode; otherwise decodes straight from `data` without
        /// copying it.
        ///
        /// - Throws: ``ImageCodecError``: `.incomplete` for a truncated file, `.corrupt` with
        ///   libjpeg's message, `.limitExceeded`, `.unsupported` (12-bit, lossless), `.cancelled`.
        public func decode(_ data: Data) throws -> ImageContainer {
            try adapter.decode(data)
        }

        /// Returns a preview of the next completed scan of a progressive JPEG not yet shown.
        ///
        /// Feeds libjpeg only the new bytes; with none, it resumes where the last call paused, so
        /// repeated calls with the same data return the scans one chunk completed. An error ends
        /// the incremental decode: this returns `nil` and the following ``decode(_:)`` throws it.
        public func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
            adapter.decodePartiallyDownloadedData(data)
        }
    }
}

/// The incremental JPEG decoder NukeCore drives: new bytes in, a preview per completed scan of
/// a progressive file, then the final image.
///
/// Complete data given in one push and finished at once is decoded in one pass straight from
/// the caller's bytes (no copy); otherwise the bytes go to libjpeg's suspending source.
final class JPEGIncrementalDecoder: IncrementalImageDecoding {
    private let context: ImageDecodingContext
    private var pending: [Data] = []
    private var session: JPEGIncrementalDecode?
    private var isFinished = false
    private var isDone = false

    init(context: ImageDecodingContext) {
        self.context = context
    }

    func push(_ bytes: Data) {
        precondition(!isFinished, "push(_:) after finish()")
        pending.append(bytes)
    }

    func finish() {
        isFinished = true
    }

    /// Without previews a progressive file's scans are consumed into libjpeg's coefficient
    /// buffer as they arrive and output once, at the end.
    func setWantsPreviews(_ wantsPreviews: Bool) {
        self.wantsPreviews = wantsPreviews
        session?.wantsPreviews = wantsPreviews
    }

    private var wantsPreviews = true

    /// Takes a sink for the final image's rows when there is no target size (decode to size
    /// shrinks what DCT scaling leaves from a bitmap); the image is then never held whole.
    func setRowSink(_ sink: any ImageRowSink) -> Bool {
        guard context.targetSize == nil, session == nil, !isDone else { return false }
        rowSink = sink
        return true
    }

    private var rowSink: (any ImageRowSink)?

    func next() throws -> ImageDecodingEvent {
        precondition(!isDone, "next() after the final image or an error")
        do {
            if session == nil, isFinished, pending.count <= 1 {
                isDone = true
                return .final(try Self.decodeOneShot(pending.first ?? Data(), context: context, sink: rowSink))
            }
            let session = try self.session ?? JPEGIncrementalDecode(limits: context.limits)
            session.wantsPreviews = wantsPreviews
            if self.session == nil { session.rowSink = rowSink }
            self.session = session
            for chunk in pending { try session.append(chunk) }
            pending = []
            if isFinished {
                isDone = true
                return .final(try session.finish(context: context))
            }
            if let preview = try session.advance(context: context) { return .preview(preview) }
            return .needsMoreData
        } catch {
            isDone = true
            throw error
        }
    }

    /// Decodes complete data in one pass, reading from the caller's bytes and writing rows
    /// straight into the bitmap's storage.
    static func decodeOneShot(_ data: Data, context: ImageDecodingContext, sink: (any ImageRowSink)? = nil) throws -> ImageContainer {
        guard !data.isEmpty else {
            throw ImageCodecError(.corrupt, stage: .header, format: .jpeg, codec: JPEGLibrary.codec, message: "empty input")
        }
        if context.isCancelled { throw JPEGDecodePlan.cancelled() }
        let decompressor = try JPEGDecompressor(limits: context.limits)
        return try data.withUnsafeBytes { raw in
            decompressor.setMemorySource(raw)
            defer { decompressor.clearMemorySource() }
            guard let header = try decompressor.readHeader() else {
                throw ImageCodecError(.incomplete, stage: .header, format: .jpeg, codec: JPEGLibrary.codec,
                                      message: "Premature end of JPEG file")
            }
            let plan = try JPEGDecodePlan(header: header, decompressor: decompressor, context: context)
            if context.isCancelled { throw JPEGDecodePlan.cancelled() }
            _ = try decompressor.start(scale: plan.scale, buffered: false)
            if let sink {
                guard try JPEGRowBand(sink: sink, decompressor: decompressor, plan: plan).read(decompressor, context: context) else {
                    throw JPEGDecodePlan.suspendedUnexpectedly()
                }
                _ = try decompressor.finish()
                return try plan.finalContainer(bitmap: .empty, decompressor: decompressor, context: context)
            }
            let bitmap = try context.allocator.makeBitmap(
                width: decompressor.outputWidth, height: decompressor.outputHeight, pixelFormat: plan.pixelFormat
            ) { (buffer) throws(ImageCodecError) in
                guard try JPEGDecodePlan.readRows(decompressor, into: buffer, bytesPerRow: plan.bytesPerRow, context: context) else {
                    throw JPEGDecodePlan.suspendedUnexpectedly()
                }
            }
            _ = try decompressor.finish()
            return try plan.finalContainer(bitmap: bitmap, decompressor: decompressor, context: context)
        }
    }
}
