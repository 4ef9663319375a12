import Dispatch
import Foundation
import Hummingbird
import Logging
import NukeCore
import Synchronization

/// Turns an upload into a thumbnail: untrusted limits, strict decoding, decode to size, encode;
/// at most `maxDecodes` at once, at most `maxWaiting` more waiting their turn in order (the rest
/// answer 503 with Retry-After at once), every error a 4xx naming the reason, one log line per
/// request.
final class Thumbnailer: Sendable {
    let maxDecodes: Int
    let maxUploadBytes: Int
    private let admission: Admission
    /// Decodes run here, off Swift's cooperative threads (they block in C libraries).
    private let queue = DispatchQueue(label: "thumbnails", attributes: .concurrent)

    init(maxDecodes: Int, maxWaiting: Int, maxUploadBytes: Int) {
        self.maxDecodes = maxDecodes
        self.maxUploadBytes = maxUploadBytes
        self.admission = Admission(running: maxDecodes, waiting: maxWaiting)
    }

    struct Failure: Error {
        var status: HTTPResponse.Status
        var reason: String
    }

    func respond(to request: Request, context: some RequestContext) async throws -> Response {
        let clock = ContinuousClock()
        let started = clock.now
        let size = request.uri.queryParameters.get("size", as: Int.self) ?? 256
        let formatName = request.uri.queryParameters.get("format") ?? "webp"
        var log: Logger.Metadata = ["size": "\(size)", "format": "\(formatName)"]
        func finish(_ response: Response, _ outcome: String) -> Response {
            log["status"] = "\(response.status.code)"
            log["outcome"] = "\(outcome)"
            log["ms"] = "\((clock.now - started).components.attoseconds / 1_000_000_000_000_000 + (clock.now - started).components.seconds * 1000)"
            context.logger.info("thumbnail", metadata: log)
            return response
        }
        guard await admission.enter() else {
            // Read the upload before answering: closing on a client still sending resets it.
            _ = try? await request.body.collect(upTo: maxUploadBytes)
            var headers = HTTPFields()
            headers[.retryAfter] = "1"
            return finish(Response(status: .serviceUnavailable, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "busy: try again\n"))), "busy")
        }
        defer { admission.leave() }
        do {
            guard (16...2048).contains(size) else { throw Failure(status: .badRequest, reason: "size must be 16…2048") }
            guard let type = Self.types[formatName] else { throw Failure(status: .badRequest, reason: "format must be one of \(Self.types.keys.sorted())") }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: maxUploadBytes)
            } catch {
                throw Failure(status: .contentTooLarge, reason: "the upload is larger than \(maxUploadBytes) bytes")
            }
            let data = Data(buffer: body)
            log["bytes"] = "\(data.count)"
            let output = try await thumbnail(data, size: size, type: type, log: &log)
            var headers = HTTPFields()
            headers[.contentType] = type.mimeType
            return finish(Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: output))), "ok")
        } catch let failure as Failure {
            return finish(Response(status: failure.status, body: .init(byteBuffer: ByteBuffer(string: failure.reason + "\n"))), failure.reason)
        }
    }

    static let types: [String: ImageType] = ["webp": .webp, "jpeg": .jpeg, "jpg": .jpeg, "png": .png, "avif": .avif]

    private func thumbnail(_ data: Data, size: Int, type: ImageType, log: inout Logger.Metadata) async throws(Failure) -> Data {
        let result: Result<(Data, String), Failure> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Self.work(data, size: size, type: type))
            }
        }
        switch result {
        case .success(let (output, input)):
            log["input"] = "\(input)"
            return output
        case .failure(let failure):
            throw failure
        }
    }

    private static func work(_ data: Data, size: Int, type: ImageType) -> Result<(Data, String), Failure> {
        guard !data.isEmpty else { return .failure(Failure(status: .badRequest, reason: "empty upload")) }
        var context = ImageDecoderRegistry.shared.makeContext(for: data)
        context.limits = .untrusted
        context.isStrict = true
        context.targetSize = ImageSize(width: size, height: size)
        context.contentMode = .aspectFit
        do {
            var image = try ImageDecoderRegistry.shared.decode(context).image
            let fit = ImageResampler.targetSize(for: ImageSize(width: image.width, height: image.height),
                                                fitting: ImageSize(width: size, height: size), contentMode: .aspectFit)
            if fit.width < image.width || fit.height < image.height { image.bitmap = image.bitmap.resized(to: fit) }
            image.frames = [image.frames[0]]
            if type == .jpeg, image.hasAlpha { image.bitmap = image.bitmap.converted(to: .rgb8) }
            let output = try ImageEncoderRegistry.shared.encode(image, as: type, options: ImageEncodingOptions(quality: 0.8))
            return .success((output, context.type?.name ?? "?"))
        } catch let error as ImageCodecError {
            return .failure(Failure(status: status(for: error), reason: "\(error.format?.name ?? "image"): \(error.code): \(error.message)"))
        } catch {
            return .failure(Failure(status: .unprocessableContent, reason: "\(error)"))
        }
    }

    /// 415 for formats no codec reads, 413 for images over the limits, 422 for the rest of what is
    /// wrong with the upload (truncated, corrupt, crashed or stalled an isolated decoder).
    private static func status(for error: ImageCodecError) -> HTTPResponse.Status {
        switch error.code {
        case .noCodec, .unsupported: return .unsupportedMediaType
        case .limitExceeded: return .contentTooLarge
        case .encodingFailed, .internalFailure: return .internalServerError
        default: return .unprocessableContent
        }
    }
}

extension ImageType {
    var mimeType: String {
        switch self {
        case .webp: "image/webp"
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .avif: "image/avif"
        default: "application/octet-stream"
        }
    }
}

/// A bounded line for the decodes: `running` at once, `waiting` more queued in arrival order,
/// and no room for anyone else (back-pressure instead of a queue without bound).
final class Admission: Sendable {
    private struct State {
        var running = 0
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let maxRunning: Int
    private let maxWaiting: Int
    private let state = Mutex(State())

    init(running: Int, waiting: Int) {
        self.maxRunning = max(running, 1)
        self.maxWaiting = max(waiting, 0)
    }

    /// `true` once the caller may run (it must call ``leave()`` after), at once or after waiting
    /// its turn; `false` at once when the line is full.
    func enter() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer: Bool? = state.withLock { state in
                if state.running < maxRunning {
                    state.running += 1
                    return true
                }
                guard state.waiters.count < maxWaiting else { return false }
                state.waiters.append(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Hands the caller's place to the first in line, or frees it.
    func leave() {
        let next: CheckedContinuation<Bool, Never>? = state.withLock { state in
            if state.waiters.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume(returning: true)
    }
}
