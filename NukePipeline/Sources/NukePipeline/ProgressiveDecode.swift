import Foundation
import NukeCore
import NukeSession
import Synchronization

/// A decode job's progressive decode: the body's pieces go to an `ImageDecodingSession` as they
/// arrive, its previews to the job's subscribers, and, when every byte went through it, its
/// final image is the job's (no second decode). A job that joined a download already under way
/// missed its first bytes: its session stops and the final image is decoded whole.
final class ProgressiveDecode: Sendable {
    private let session: ImageDecodingSession
    /// Bytes appended, or `nil` once a piece came out of order.
    private let fed = Mutex<Int?>(0)
    private let events: Task<ImageContainer?, Never>

    init(registry: ImageDecoderRegistry, context: ImageDecodingContext, thumbnail: ImageRequest.Thumbnail?, handle: JobHandle) {
        var targetSize: (@Sendable (ImageHeader) -> ImageSize?)?
        if let size = thumbnail?.size { targetSize = { _ in size } }
        let session = ImageDecodingSession(configuration: ImageDecodingSession.Configuration(
            registry: registry, context: context, isProgressive: true, targetSize: targetSize))
        self.session = session
        events = Task {
            for await event in session.events {
                switch event {
                case .preview(let container, _): handle.send(.preview(container))
                case .final(let container, _): return container
                case .failure: return nil
                case .formatKnown, .sizeKnown: continue
                }
            }
            return nil
        }
    }

    /// Adds the piece that starts at byte `offset`.
    func append(_ chunk: Data, at offset: Int) {
        let inOrder = fed.withLock { fed -> Bool in
            guard let count = fed, count == offset else {
                fed = nil
                return false
            }
            fed = count + chunk.count
            return true
        }
        if inOrder { session.append(chunk) } else { session.cancel() }
    }

    /// The session's final image when it saw all `count` bytes; `nil` when the caller must decode
    /// the data itself (the session missed bytes, or failed: the one-shot decode gives the verdict).
    func finish(count: Int) async throws -> ImageContainer? {
        guard fed.withLock({ $0 }) == count else {
            cancel()
            return nil
        }
        session.finish()
        return await withTaskCancellationHandler {
            await events.value
        } onCancel: {
            session.cancel()
        }
    }

    func cancel() {
        fed.withLock { $0 = nil }
        session.cancel()
    }
}

/// Previews through a processor, the latest winning: while one is being processed, newer ones
/// replace each other, and only the newest is processed next.
final class LatestPreview: Sendable {
    private let process: @Sendable (ImageContainer) -> Void
    private let state = Mutex<(pending: ImageContainer?, isRunning: Bool)>((nil, false))

    init(process: @escaping @Sendable (ImageContainer) -> Void) {
        self.process = process
    }

    func submit(_ preview: ImageContainer) {
        let start = state.withLock { state -> Bool in
            state.pending = preview
            if state.isRunning { return false }
            state.isRunning = true
            return true
        }
        guard start else { return }
        BlockingWorkQueue.shared.submit { [self] in
            while let next = state.withLock({ state -> ImageContainer? in
                defer { state.pending = nil }
                if state.pending == nil { state.isRunning = false }
                return state.pending
            }) {
                process(next)
            }
        }
    }
}
