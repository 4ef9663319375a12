import Foundation
import NukeCore
import NukeProcessing
import Synchronization

/// An upload decoded as it arrives: its pieces go to one decoder (NukeCore's
/// `ImageDecoderRegistry.StreamingDecode`) and are dropped, so the service holds what the decoder
/// builds instead of the upload. Each ``push(_:isLast:)`` runs on a decode thread in a slot of the
/// fast lane, one at a time; the last one (or the piece that completes the image) processes and
/// encodes the thumbnail.
final class StreamedUpload: Sendable {
    /// The thumbnail, and the format it was made from.
    struct Thumbnail: Sendable {
        var output: Data
        var input: ImageType
    }

    private struct State {
        var decode: ImageDecoderRegistry.StreamingDecode?
        /// The context the decode was planned with, for the processors' finish.
        var planned: ImageDecodingContext?
        var decodeTime: Duration = .zero
    }

    let job: Thumbnailer.Job
    let type: ImageType
    let metrics: ServiceMetrics?
    /// The decoder between pieces. The lock makes it `Sendable`: each piece's decode takes it, on
    /// whichever decode thread runs that piece.
    private let state = Mutex(State())
    private let processors: [any ImageProcessing]

    init(job: Thumbnailer.Job, type: ImageType, metrics: ServiceMetrics?) {
        self.job = job
        self.type = type
        self.metrics = metrics
        processors = Thumbnailer.processors(for: job.request)
    }

    /// Bytes of the budget a streamed decode holds between pieces, from the header: the image it
    /// builds (`ImageHeader.declaredImageBytes`), and for a progressive JPEG libjpeg's
    /// coefficients too (2 bytes a sample, every component at full size at most).
    static func reservation(for header: ImageHeader) -> Int {
        guard header.type == .jpeg, header.isProgressive else { return min(header.declaredImageBytes, .max / 2) }
        // A JPEG frame's sides are 16-bit: the row's samples cannot overflow.
        let (coefficients, overflow) = (header.width * 2 * (header.componentCount ?? 4)).multipliedReportingOverflow(by: header.height)
        return overflow ? .max / 2 : min(header.declaredImageBytes, .max / 4) + min(coefficients, .max / 4)
    }


    /// Decodes `piece`, the first one starting the decode; with `isLast`, or when the image is
    /// complete before its last byte, processes and encodes the thumbnail.
    ///
    /// - Returns: The thumbnail, or `nil` while more pieces are needed.
    /// - Throws: The answer for the first verdict a piece shows (corrupt, over a limit), which
    ///   ends the upload unread.
    func push(_ piece: Data, isLast: Bool) throws(Thumbnailer.Failure) -> Thumbnail? {
        let inputName = type.name.lowercased()
        do {
            return try state.withLock { state throws -> Thumbnail? in
                let started = ContinuousClock.now
                if state.decode == nil, isLast {
                    // All of it in one piece: decoded whole, as an upload read whole is (in one
                    // pass from memory, not through the suspending source).
                    let container = try ImageDecoderRegistry.shared.decode(Thumbnailer.decodingContext(for: piece), processors: processors)
                    metrics?.recordDecode(format: inputName, duration: ContinuousClock.now - started)
                    return Thumbnail(output: try Thumbnailer.encoded(container, job), input: type)
                }
                var decode: ImageDecoderRegistry.StreamingDecode
                let planned: ImageDecodingContext
                var container: ImageContainer?
                if let current = state.decode, let plan = state.planned {
                    (decode, planned) = (current, plan)
                    container = try decode.push(piece)
                } else {
                    // The first piece: the format, the header and the plan come from it.
                    var plan = Thumbnailer.decodingContext(for: piece).planned(for: processors)
                    plan.defersOutputStage = !processors.isEmpty
                    (decode, planned) = (try ImageDecoderRegistry.shared.streamingDecode(plan), plan)
                    container = try decode.push(Data())
                }
                if container == nil, isLast { container = try decode.finish() }
                state.decodeTime += ContinuousClock.now - started
                guard let container else {
                    (state.decode, state.planned) = (decode, planned)
                    return nil
                }
                state.decode = nil
                metrics?.recordDecode(format: inputName, duration: state.decodeTime)
                return Thumbnail(output: try Thumbnailer.encoded(container.finished(by: processors, planned: planned), job), input: type)
            }
        } catch {
            var failure = Thumbnailer.failure(for: error, input: inputName, metrics: metrics)
            // The rest of the upload is not read.
            failure.closes = true
            throw failure
        }
    }
}
