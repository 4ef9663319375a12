#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit
import Synchronization

/// The incremental JPEG decoder NukeCore drives: new bytes in, a preview per completed scan of
/// a progressive file, then the final image.
///
/// Complete data given in one push and finished at once is decoded in one pass straight from
/// the caller's bytes (no copy); otherwise the bytes go to libjpeg's suspending source.
final class JPEGIncrementalDecoder: IncrementalImageDecoding {
    private let context: ImageDecodingContext
    private var pending: [Data] = []
    private var session: JPEGSuspendingDecode?
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
            let session = try self.session ?? JPEGSuspendingDecode(context: context)
            session.wantsPreviews = wantsPreviews
            if self.session == nil { session.rowSink = rowSink }
            self.session = session
            for chunk in pending { try session.append(chunk) }
            pending = []
            if isFinished {
                isDone = true
                return .final(try session.finish(context: context))
            }
            switch try session.advance(context: context) {
            case nil: return .needsMoreData
            case let (container, isFinal)?:
                // The scans a decode at 1/8 reads are all in: the rest of the file is not needed.
                if isFinal { isDone = true }
                return isFinal ? .final(container) : .preview(container)
            }
        } catch {
            isDone = true
            throw error
        }
    }

    /// Decodes complete data in one pass, reading from the caller's bytes and writing rows
    /// straight into the bitmap's storage.
    /// A progressive file decoded at 1/8 is first stripped of the scans that scale never reads
    /// (``JPEGScanFilter``).
    static func decodeOneShot(_ data: Data, context: ImageDecodingContext, sink: (any ImageRowSink)? = nil) throws -> ImageContainer {
        guard !data.isEmpty else {
            throw JPEGLibrary.error(.corrupt, .header, "empty input")
        }
        if let (filtered, filter) = try JPEGScanFilter.filtered(data, context: context) {
            return try decodeOneShot(filtered, filter: filter, context: context, sink: sink)
        }
        return try decodeOneShot(data, filter: nil, context: context, sink: sink)
    }

    private static func decodeOneShot(_ data: Data, filter: JPEGScanFilter?, context: ImageDecodingContext, sink: (any ImageRowSink)?) throws -> ImageContainer {
        let decompressor = try JPEGDecompressor(limits: context.limits)
        return try decompressor.withCancellation(of: context) { try data.withUnsafeBytes { raw in
            decompressor.setMemorySource(raw)
            defer { decompressor.clearMemorySource() }
            guard let header = try decompressor.readHeader() else {
                throw JPEGLibrary.error(.incomplete, .header, "Premature end of JPEG file")
            }
            let plan = try JPEGDecodePlan(header: header, decompressor: decompressor, context: context)
            if context.isCancelled { throw JPEGDecodePlan.cancelled() }
            try filter?.prepare(decompressor, scale: plan.scale)
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
        } }
    }
}
