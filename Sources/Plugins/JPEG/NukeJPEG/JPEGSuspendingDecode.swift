#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// One progressive decoding session: libjpeg with a suspending source, fed only the bytes it
/// has not seen.
///
/// Multi-scan (progressive) files run in buffered-image mode: input is consumed with
/// `jpeg_consume_input`, and each time a scan completes (the next SOS or the EOI arrives)
/// consumption pauses and that scan is output from the coefficient buffer, which never needs
/// more input. So every scan gets its own preview even when one chunk completes several: the
/// next call, with the same data or more, resumes consuming where the last one paused.
/// Single-scan files are decoded row by row into a buffer as the bytes arrive. libjpeg's
/// arithmetic decoder cannot suspend, so for arithmetic-coded files libjpeg is shown only the
/// bytes up to the last SOS or EOI marker received: it never starts a scan it cannot finish.
///
/// Not thread-safe: ``ImageDecoders/JPEG`` keeps it in its `Mutex`.
final class JPEGSuspendingDecode {
    private let decompressor: JPEGDecompressor
    private var plan: JPEGDecodePlan?
    private var isStarted = false
    /// The number of scans whose data has fully arrived.
    private var completedScans = 0
    /// The scan the last preview showed.
    private var previewedScan = 0
    private var reachedEnd = false
    /// Off: progressive scans are only consumed (no preview output passes) until the end.
    var wantsPreviews = true
    /// The rows of a single-scan file decoded so far.
    private var pixels = Bitmap.empty
    /// Takes the final image's rows instead of a bitmap, when set before the decode starts.
    var rowSink: (any ImageRowSink)?
    /// The band of rows on its way to ``rowSink`` (single-scan files).
    private var band: JPEGRowBand?

    /// Drops the scans a decode at 1/8 never reads, before libjpeg sees them (a decode to size).
    private var scanFilter: JPEGScanFilter?

    init(context: ImageDecodingContext) throws(ImageCodecError) {
        decompressor = try JPEGDecompressor(limits: context.limits)
        if context.targetSize != nil { scanFilter = JPEGScanFilter(context: context) }
    }

    /// Appends bytes that follow the ones given before to libjpeg's input.
    func append(_ bytes: Data) throws(ImageCodecError) {
        let bytes = try scanFilter?.feed(bytes) ?? bytes
        guard !bytes.isEmpty else { return }
        try bytes.withBytes { (raw) throws(ImageCodecError) in try decompressor.append(raw) }
    }

    /// Decodes as far as the input allows and returns a preview when a scan has completed, or
    /// the final image (`isFinal`) when the scan filter found that everything the decode reads
    /// has arrived.
    func advance(context: ImageDecodingContext) throws(ImageCodecError) -> (container: ImageContainer, isFinal: Bool)? {
        try decompressor.withCancellation(of: context) { () throws(ImageCodecError) in try run(context: context, isFinal: false) }
    }

    /// Declares the end of input and returns the final image.
    func finish(context: ImageDecodingContext) throws(ImageCodecError) -> ImageContainer {
        if let rest = scanFilter?.flush() { try append(rest) }
        decompressor.setEndOfInput()
        guard let (container, _) = try decompressor.withCancellation(of: context, { () throws(ImageCodecError) in try run(context: context, isFinal: true) }) else {
            throw JPEGDecodePlan.suspendedUnexpectedly()
        }
        return container
    }

    private func run(context: ImageDecodingContext, isFinal: Bool) throws(ImageCodecError) -> (container: ImageContainer, isFinal: Bool)? {
        if plan == nil {
            guard let header = try decompressor.readHeader() else { return nil }
            let plan = try JPEGDecodePlan(header: header, decompressor: decompressor, context: context)
            // libjpeg's arithmetic decoder cannot suspend (JERR_CANT_SUSPEND): show it only
            // whole scans, up to the last SOS or EOI marker received.
            if plan.isArithmetic { decompressor.setGated(true) }
            self.plan = plan
        }
        guard let plan else { return nil }
        if !isStarted {
            try scanFilter?.prepare(decompressor, scale: plan.scale)
            guard try decompressor.start(scale: plan.scale, buffered: plan.hasMultipleScans) else { return nil }
            isStarted = true
            if !plan.hasMultipleScans, let rowSink {
                band = try JPEGRowBand(sink: rowSink, decompressor: decompressor, plan: plan)
            } else if !plan.hasMultipleScans {
                pixels = try Bitmap(
                    width: decompressor.outputWidth, height: decompressor.outputHeight, pixelFormat: plan.pixelFormat,
                    bytesPerRow: plan.bytesPerRow, storage: context.allocator.allocate(byteCount: plan.bytesPerRow * decompressor.outputHeight, zeroed: true)
                )
            }
        }
        if plan.hasMultipleScans {
            return try runScans(plan: plan, context: context, isFinal: isFinal)
        }
        return try runRows(plan: plan, context: context, isFinal: isFinal).map { ($0, true) }
    }

    /// Buffered-image mode: consume up to the next completed scan, then output it.
    ///
    /// The final call consumes everything and outputs only the last scan.
    private func runScans(plan: JPEGDecodePlan, context: ImageDecodingContext, isFinal: Bool) throws(ImageCodecError) -> (container: ImageContainer, isFinal: Bool)? {
        // The filter ended the data: once libjpeg reaches that end, the image is final.
        let endsEarly = scanFilter?.hasEnded ?? false
        consuming: while !reachedEnd {
            // A completed scan not yet shown: show it before reading on.
            if !isFinal && wantsPreviews && completedScans > previewedScan { break }
            if context.isCancelled { throw JPEGDecodePlan.cancelled() }
            switch try decompressor.consume() {
            case .suspended:
                break consuming
            case .reachedScan:
                completedScans = decompressor.inputScanNumber - 1
            case .reachedEnd:
                reachedEnd = true
                completedScans = decompressor.inputScanNumber
            }
        }
        if isFinal || (endsEarly && reachedEnd) {
            // With the end of input declared, running out of data throws `.incomplete` above.
            guard reachedEnd else { throw JPEGDecodePlan.suspendedUnexpectedly() }
            let bitmap = try output(scan: completedScans, plan: plan, context: context, sink: rowSink)
            _ = try decompressor.finish()
            return (try plan.finalContainer(bitmap: bitmap, decompressor: decompressor, context: context), true)
        }
        guard wantsPreviews, completedScans > previewedScan else { return nil }
        previewedScan = completedScans
        let bitmap = try output(scan: completedScans, plan: plan, context: context)
        return (plan.container(bitmap: bitmap, context: context, isPreview: true, scan: completedScans), false)
    }

    /// One output pass of a complete scan from the coefficient buffer: a bitmap, or with a
    /// sink, ``Bitmap/empty`` after every row went to the sink.
    private func output(scan: Int, plan: JPEGDecodePlan, context: ImageDecodingContext, sink: (any ImageRowSink)? = nil) throws(ImageCodecError) -> Bitmap {
        guard try decompressor.startOutput(scan: scan) else { throw JPEGDecodePlan.suspendedUnexpectedly() }
        let decompressor = self.decompressor
        if let sink {
            guard try JPEGRowBand(sink: sink, decompressor: decompressor, plan: plan).read(decompressor, context: context),
                  try decompressor.finishOutput() else { throw JPEGDecodePlan.suspendedUnexpectedly() }
            return .empty
        }
        let bitmap = try context.allocator.makeBitmap(
            width: decompressor.outputWidth, height: decompressor.outputHeight, pixelFormat: plan.pixelFormat
        ) { (buffer) throws(ImageCodecError) in
            guard try JPEGDecodePlan.readRows(decompressor, into: buffer, bytesPerRow: plan.bytesPerRow, context: context) else {
                throw JPEGDecodePlan.suspendedUnexpectedly()
            }
        }
        guard try decompressor.finishOutput() else { throw JPEGDecodePlan.suspendedUnexpectedly() }
        return bitmap
    }

    /// Single-scan files: rows as the data arrives; no previews.
    private func runRows(plan: JPEGDecodePlan, context: ImageDecodingContext, isFinal: Bool) throws(ImageCodecError) -> ImageContainer? {
        let decompressor = self.decompressor
        let done: Bool
        if let band {
            done = try band.read(decompressor, context: context)
        } else {
            let result = pixels.withUnsafeMutableBytes { buffer in
                Result { () throws(ImageCodecError) in
                    try JPEGDecodePlan.readRows(decompressor, into: buffer, bytesPerRow: plan.bytesPerRow, context: context)
                }
            }
            done = try result.get()
        }
        guard isFinal else { return nil }
        guard done else { throw JPEGDecodePlan.suspendedUnexpectedly() }
        _ = try decompressor.finish()
        let bitmap = pixels
        pixels = .empty
        return try plan.finalContainer(bitmap: bitmap, decompressor: decompressor, context: context)
    }
}
