import Dispatch
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NukeCore
import NukeProcessing
import NukePixels
import NukeIsolation
import NukeJXL

/// Turns an upload into a thumbnail: untrusted limits, strict decoding, decode to size, encode.
///
/// Decodes go through two lanes, so that formats slow by nature cannot take every slot:
/// - **fast** (JPEG, PNG, GIF, WebP, TIFF, BMP, ICO, in process): `fastSlots` at once;
/// - **slow** (HEIC, HEIF, AVIF, SVG, in sandboxed helpers that run at a lower priority; JPEG XL,
///   in process: libjxl decodes a photograph several times slower than libjpeg-turbo):
///   `slowSlots` at once.
/// Each lane queues at most `waiting` more, the client that cost least first, and at most
/// `perClient` from one client (429 beyond it); the rest answer 503 with `Retry-After` at once.
/// The slow lane borrows the fast lane's idle slots and bounds each client's share by cost
/// (``Admission``). Every error is
/// a 4xx naming the reason, except a helper lost mid-decode (503, after one retry).
final class Thumbnailer: Sendable {
    struct Settings: Sendable {
        var fastSlots = 4
        var slowSlots = 1
        var waiting = 64
        var perClient = 8
        var maxUploadBytes = 32 << 20
        /// A body must arrive within this plus its length at `minimumBodyRate`.
        var bodyFloor: Duration = .seconds(10)
        var minimumBodyRate = 64 << 10
        var defaultFormat: ImageType = .webp
        var defaultQuality = 80
        var maxBufferedBytes = 256 << 20
        /// Uploads beyond the memory budget go to files here, up to `maxSpooledBytes` at once.
        var spoolDirectory: String?
        var maxSpooledBytes = 1 << 30
        /// Slot time one client may have used in the slow lane recently (halving each minute)
        /// before it is answered 429 until that decays.
        var slowLaneClientBudget: Duration = .seconds(60)
        /// Sandboxed helpers: the slow lane borrows no more slots than they can serve.
        var helpers = 2
    }

    let settings: Settings
    let metrics: ServiceMetrics?
    /// Upload bodies and source downloads in memory at once.
    let budget: ByteBudget
    /// Where uploads the budget cannot hold go, if anywhere.
    let spool: Spool?
    let fast: Admission
    let slow: Admission
    /// Decodes run here, off Swift's cooperative threads (they block in C libraries).
    private let queue = DispatchQueue(label: "thumbnails", attributes: .concurrent)

    /// Formats decoded in helpers, slow by nature.
    static let slowFormats: Set<ImageType> = [.heic, .heif, .avif, .jxl, .svg]

    init(settings: Settings, metrics: ServiceMetrics? = nil) {
        self.settings = settings
        self.metrics = metrics
        // One heap trim at the end of a burst, when neither memory nor spool holds an upload.
        let trimmer = HeapTrimmer()
        budget = ByteBudget(limit: settings.maxBufferedBytes, trimmer: trimmer)
        spool = settings.spoolDirectory.map { Spool(directory: $0, limit: settings.maxSpooledBytes, trimmer: trimmer) }
        fast = Admission(name: "fast", running: settings.fastSlots, waiting: settings.waiting, perClient: settings.perClient)
        // The slow lane borrows the fast lane's idle slots; a client's slow work is bounded by
        // its recent cost (a minute of slot time, halving each minute) and, once its requests
        // average a second or more, leaves one slot to the others.
        slow = Admission(name: "slow", running: settings.slowSlots, waiting: settings.waiting, perClient: settings.perClient,
                         costBudget: settings.slowLaneClientBudget, heavyCost: .seconds(1), lender: fast,
                         maxBorrowed: max(0, settings.helpers - settings.slowSlots))
    }

    struct Failure: Error, Equatable {
        var status: HTTPResponse.Status
        var reason: String
        var retryAfter: Int?
        /// Close the connection after answering (the body was not read).
        var closes = false
        /// A helper was lost mid-decode (killed from outside): worth one more try at once. A
        /// helper that ran out of time is not: the same document would again.
        var helperLost = false
        /// The verdict is on the bytes (corrupt, cut short, no codec reads them): a cached copy
        /// of such a source is of no use.
        var badBytes = false
    }

    /// The request's parameters, validated.
    struct Parameters {
        var size: Int
        var type: ImageType

        var request: ThumbnailRequest { ThumbnailRequest(mode: .fit, width: size, height: size, format: type) }

        static let known: Set<String> = ["size", "format"]

        init(_ uri: URI) throws(Failure) {
            let query = uri.queryParameters
            for (key, _) in query where !Self.known.contains(String(key)) {
                throw Failure(status: .badRequest, reason: "unknown parameter \(String(key)) (known: size, format)")
            }
            if let text = query.get("size") {
                guard let size = Int(text), (16...2048).contains(size) else { throw Failure(status: .badRequest, reason: "size must be a whole number 16…2048") }
                self.size = size
            } else {
                size = 256
            }
            let name = query.get("format") ?? "webp"
            guard let type = Thumbnailer.types[name] else {
                throw Failure(status: .badRequest, reason: "format must be one of \(Thumbnailer.types.keys.sorted().joined(separator: ", "))")
            }
            self.type = type
        }
    }

    func respond(to request: Request, context: ThumbnailContext) async throws -> Response {
        let clock = ContinuousClock()
        let started = clock.now
        let client = context.clientAddress
        var log: Logger.Metadata = ["client": .string(client)]
        func finish(_ response: Response, _ outcome: String) -> Response {
            log["status"] = "\(response.status.code)"
            log["outcome"] = .string(LogEscaping.escaped(outcome))
            let elapsed = clock.now - started
            log["ms"] = "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)"
            context.logger.info("thumbnail", metadata: log)
            return response
        }
        do {
            let parameters = try Parameters(request.uri)
            log["size"] = "\(parameters.size)"
            log["format"] = .string(parameters.type.name)
            let share = ByteBudget.Share(budget)
            defer { share.release() }
            let job = Job(request: parameters.request, format: parameters.type, quality: settings.defaultQuality)
            let output: Data
            switch try await readBody(request, share: share, streaming: job, client: client) {
            case .whole(let data):
                log["bytes"] = "\(data.count)"
                guard !data.isEmpty else { throw Failure(status: .badRequest, reason: "empty upload") }
                output = try await render(data, parameters.request, format: parameters.type, quality: settings.defaultQuality, client: client, log: &log)
            case .streamed(let thumbnail, let bytesRead):
                log["bytes"] = "\(bytesRead)"
                log["input"] = .string(thumbnail.input.name)
                log["lane"] = .string(fast.name)
                log["upload"] = "streamed"
                output = thumbnail.output
            }
            var headers = HTTPFields()
            headers[.contentType] = parameters.type.mimeType
            return finish(Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: output))), "ok")
        } catch let failure as Failure {
            var headers = HTTPFields()
            if let seconds = failure.retryAfter { headers[.retryAfter] = "\(seconds)" }
            if failure.closes { headers[.connection] = "close" }
            return finish(Response(status: failure.status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: failure.reason + "\n"))), failure.reason)
        }
    }

    /// Decodes `data` and encodes the thumbnail `request` asks for, in the lane its format
    /// belongs to, waiting for a turn there or answering why there is none.
    func render(_ data: Data, _ request: ThumbnailRequest, format: ImageType, quality: Int, client: String, log: inout Logger.Metadata) async throws -> Data {
        let input = ImageType(data)
        log["input"] = .string(input?.name ?? "?")
        let lane = input.map { Self.slowFormats.contains($0) } == true ? slow : fast
        log["lane"] = .string(lane.name)
        let ticket = try await admit(to: lane, client: client)
        defer { lane.leave(ticket) }
        if Task.isCancelled { throw CancellationError() }
        let job = Job(request: request, format: format, quality: quality)
        return try await thumbnail(data, job, log: &log)
    }

    /// A slot in `lane` for `client`, waiting for a turn there or answering why there is none.
    func admit(to lane: Admission, client: String) async throws -> Admission.Ticket {
        switch await lane.enter(client: client) {
        case .admitted(let ticket):
            return ticket
        case .overBudget(let seconds):
            metrics?.countRejection(lane: lane.name, reason: "cost")
            throw Failure(status: .tooManyRequests, reason: "this client has used its share of the \(lane.name) lane; try again later", retryAfter: seconds)
        case .busy:
            metrics?.countRejection(lane: lane.name, reason: "busy")
            throw Failure(status: .serviceUnavailable, reason: "busy: try again", retryAfter: 1)
        case .clientOverLimit:
            metrics?.countRejection(lane: lane.name, reason: "client")
            throw Failure(status: .tooManyRequests, reason: Self.clientOverLimitReason(client: client, limit: lane.perClientLimit, lane: lane.name),
                          retryAfter: 1)
        case .cancelled:
            throw CancellationError()
        }
    }

    /// Why a client was answered 429 for requests at once, and what to do when one address is
    /// many users: a service behind a proxy or load balancer sees the proxy's address for every
    /// request unless it trusts the proxy's `X-Forwarded-For` (`--trusted-proxies`).
    static func clientOverLimitReason(client: String, limit: Int, lane: String) -> String {
        "too many requests from this client at once: \(client) has \(limit) in the \(lane) lane, the most one client may "
            + "(--max-per-client); behind a proxy, start the service with --trusted-proxies so that each client behind it counts apart"
    }

    /// One decode and encode, with everything it needs.
    struct Job: Sendable {
        var request: ThumbnailRequest
        var format: ImageType
        var quality: Int
    }

    /// What reading an upload gave: its bytes, or the thumbnail a decode made from them as they
    /// arrived (``StreamedUpload``).
    enum Body {
        case whole(Data)
        case streamed(StreamedUpload.Thumbnail, bytesRead: Int)
    }

    /// The upload, refused without reading it when it declares more than the limit or more than
    /// the byte budget and the spool have left, read within its deadline, and refused as soon as
    /// its first bytes show no format a codec reads (not after 30 MB of it). Past those first
    /// bytes, a JPEG or PNG whose decode the budget holds is decoded as it arrives instead of
    /// being held (``stream(_:rest:job:client:limit:)``).
    private func readBody(_ request: Request, share: ByteBudget.Share, streaming job: Job, client: String) async throws -> Body {
        let limit = settings.maxUploadBytes
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        if let declared, declared > limit {
            throw Failure(status: .contentTooLarge, reason: "the upload declares \(declared) bytes, more than the limit of \(limit)", closes: true)
        }
        let (metrics, spool) = (metrics, spool)
        let refuse: @Sendable () -> Failure = {
            metrics?.countRejection(lane: "memory", reason: "budget")
            return Failure(status: .serviceUnavailable, reason: "busy: the service holds as many uploads as its memory and spool allow; try again",
                           retryAfter: 1, closes: true)
        }
        let deadline = settings.bodyFloor + .seconds(Double(min(declared ?? limit, limit)) / Double(max(1, settings.minimumBodyRate)))
        let sniffLength = Self.sniffLength
        return try await withThrowingTaskGroup(of: Body?.self) { group in
            group.addTask {
                // Before a byte is read: the declared length fits somewhere, or the answer is 503.
                let buffer = try UploadBuffer(share: share, spool: spool, declared: declared, refuse: refuse)
                var sniffed = false
                var body = request.body.makeAsyncIterator()
                do {
                    while let chunk = try await body.next() {
                        guard buffer.count + chunk.readableBytes <= limit else { throw Self.overLimit(limit) }
                        try buffer.append(chunk)
                        if !sniffed, buffer.count >= sniffLength {
                            sniffed = true
                            guard ImageType(buffer.head(sniffLength)) != nil else { throw Self.unknownFormat }
                            if let streamed = try await self.stream(buffer, rest: &body, job: job, client: client, limit: limit) {
                                return streamed
                            }
                        }
                    }
                    return .whole(try buffer.data())
                } catch let failure as Failure {
                    throw failure
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    throw Failure(status: .badRequest, reason: "the upload could not be read: \(error)", closes: true)
                }
            }
            group.addTask {
                try await Task.sleep(for: deadline)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            guard let first else {
                throw Failure(status: .requestTimeout, reason: "the upload did not arrive within \(deadline)", closes: true)
            }
            return first
        }
    }

    static func overLimit(_ limit: Int) -> Failure {
        Failure(status: .contentTooLarge, reason: "the upload is larger than \(limit) bytes", closes: true)
    }

    /// Formats whose decoders keep none of the input they have decoded (libjpeg's suspending
    /// source keeps its unread tail, libpng's progressive reader a row), so an upload in them can
    /// be decoded as it arrives without being held.
    static let streamedFormats: Set<ImageType> = [.jpeg, .png]

    /// Bytes of a streamed upload read before they go to the decoder, in one slot of the fast lane.
    static let pieceLength = 256 << 10

    /// Decodes the rest of an upload as it arrives, when its format's decoder keeps no input
    /// (``streamedFormats``), its header is in the bytes read so far, and the byte budget holds
    /// what the decode builds (``StreamedUpload/reservation(for:)``) plus two pieces: the upload's
    /// memory or spool share is then returned, and each piece of up to ``pieceLength`` bytes is
    /// decoded in a slot of the fast lane, taken for that piece only (a client that sends slowly
    /// holds no slot while it does). `nil` when any of that does not hold: the upload is read
    /// whole, as before.
    private func stream(_ buffer: UploadBuffer, rest body: inout RequestBody.AsyncIterator, job: Job, client: String, limit: Int) async throws -> Body? {
        // A copy: a slice of the buffer would keep its storage, reserved for the whole upload.
        let head = buffer.head(buffer.count).withUnsafeBytes { Data($0) }
        guard let type = ImageType(head), Self.streamedFormats.contains(type),
              case .parsed(let header) = ImageDecoderRegistry.shared.parseHeader(head) else { return nil }
        let share = ByteBudget.Share(budget)
        defer { share.release() }
        // What the decode builds, one piece being read and the decoder's copy of the last.
        guard share.grow(to: StreamedUpload.reservation(for: header) + 2 * Self.pieceLength) else { return nil }
        buffer.discard()
        let upload = StreamedUpload(job: job, type: type, metrics: metrics)
        var read = head.count
        var piece = head
        while true {
            let chunk = try await body.next()
            if let chunk {
                guard read + chunk.readableBytes <= limit else { throw Self.overLimit(limit) }
                read += chunk.readableBytes
                piece.append(contentsOf: chunk.readableBytesView)
                guard piece.count >= Self.pieceLength else { continue }
            }
            let (next, isLast) = (piece, chunk == nil)
            piece = Data()
            let thumbnail: StreamedUpload.Thumbnail?
            do {
                thumbnail = try await decodeInFastLane(client: client) { () throws(Failure) in try upload.push(next, isLast: isLast) }
            } catch var failure as Failure {
                // Busy, or this client over its share: the rest of the upload is not read.
                failure.closes = true
                throw failure
            }
            guard let thumbnail else { continue }
            // Complete before its last byte (every scan a decode to size reads was in): the rest
            // is read and dropped, within the upload's limit and deadline, so that the client gets
            // its answer on a connection it can keep rather than one reset under its unsent bytes.
            while !isLast, let chunk = try await body.next() {
                guard read + chunk.readableBytes <= limit else { throw Self.overLimit(limit) }
                read += chunk.readableBytes
            }
            return .streamed(thumbnail, bytesRead: read)
        }
    }

    /// Runs `body` off the cooperative threads, in a slot of the fast lane.
    private func decodeInFastLane<T: Sendable>(client: String, _ body: @escaping @Sendable () throws(Failure) -> T) async throws -> T {
        let ticket = try await admit(to: fast, client: client)
        defer { fast.leave(ticket) }
        if Task.isCancelled { throw CancellationError() }
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(Failure) in try body() }) }
        }
        return try result.get()
    }

    /// Bytes of an upload after which a format no codec reads is refused without reading the
    /// rest: every binary format shows itself in its first 12 bytes, and an SVG's root element
    /// comes within its first 64 KiB (after a prolog, comments or a DOCTYPE).
    static let sniffLength = 64 << 10

    static let unknownFormat = Failure(status: .unsupportedMediaType, reason: "the upload is in no format a codec here reads", closes: true,
                                       badBytes: true)

    static let types: [String: ImageType] = ["webp": .webp, "jpeg": .jpeg, "jpg": .jpeg, "png": .png, "avif": .avif]

    private func thumbnail(_ data: Data, _ job: Job, log: inout Logger.Metadata) async throws(Failure) -> Data {
        var attempt = 0
        while true {
            let result: Result<Data, Failure> = await withCheckedContinuation { continuation in
                queue.async { [metrics] in continuation.resume(returning: Self.work(data, job, metrics: metrics)) }
            }
            switch result {
            case .success(let output):
                return output
            case .failure(let failure) where failure.helperLost && attempt == 0:
                // A helper lost mid-decode (killed from outside): once more, in another helper.
                attempt += 1
                log["retried"] = .string(LogEscaping.escaped(failure.reason))
            case .failure(let failure):
                throw failure
            }
        }
    }

    private static func work(_ data: Data, _ job: Job, metrics: ServiceMetrics?) -> Result<Data, Failure> {
        let started = ContinuousClock.now
        let inputName = ImageType(data)?.name.lowercased() ?? "unknown"
        do {
            // Decoded to size by the processors' plan: a fit decodes to fit the box, a fill to
            // cover it (the codec reducing natively) and is then cropped to the box.
            let container = try ImageDecoderRegistry.shared.decode(decodingContext(for: data), processors: processors(for: job.request))
            metrics?.recordDecode(format: inputName, duration: ContinuousClock.now - started)
            return .success(try encoded(container, job))
        } catch {
            return .failure(failure(for: error, input: inputName, metrics: metrics))
        }
    }

    /// How every upload is decoded, `data` being all of it or its first piece.
    static func decodingContext(for data: Data) -> ImageDecodingContext {
        var context = ImageDecoderRegistry.shared.makeContext(for: data)
        context.limits = .untrusted
        context.isStrict = true
        // Upright pixels: a phone's portrait photo is stored on its side with an EXIF orientation
        // that Chromium ignores in WebP, the service's default output.
        context.appliesOrientation = true
        // sRGB pixels (NukeColor, Little CMS): a CMYK, Display P3, Adobe RGB or nclx upload shows
        // the same in every browser, profile or none.
        context.colorConversion = .sRGB
        return context
    }

    /// The thumbnail of a decoded (and processed) container, in the job's format.
    static func encoded(_ container: ImageContainer, _ job: Job) throws -> Data {
        // A public thumbnail keeps only what displays it correctly (the ICC profile): no
        // uploader's location, camera serial or embedded thumbnail. Alpha into JPEG is
        // composited onto white. A JPEG gets optimal Huffman tables (a few per cent smaller for
        // well under a millisecond at thumbnail sizes), and is progressive when asked (`pj:1`).
        var options = ImageEncodingOptions(quality: Double(job.quality) / 100, isProgressive: job.request.progressiveJPEG,
                                           metadata: .display, background: .white)
        options.optimizesCoding = true
        if job.request.keepsAnimation, let animation = container.animation, animation.frameCount > 1,
           let encoder = ImageEncoderRegistry.shared.encoder(for: job.format, options: options) as? any AnimatedImageEncoding {
            // Frames decoded, resized and encoded one at a time.
            return try encoder.encode(animation)
        }
        var image = container.image
        image.frames = [image.frames[0]]
        return try ImageEncoderRegistry.shared.encode(image, as: job.format, options: options)
    }

    /// The answer for what a decode or an encode threw, counted by `input` format and code.
    static func failure(for error: any Error, input: String, metrics: ServiceMetrics?) -> Failure {
        guard let error = error as? ImageCodecError else { return Failure(status: .unprocessableContent, reason: "\(error)") }
        metrics?.countDecodeFailure(format: input, code: error.code.rawValue)
        var failure = Failure(status: status(for: error), reason: "\(error.format?.name ?? "image"): \(error.code): \(error.message)",
                              retryAfter: [.helperLost, .internalFailure, .timedOut].contains(error.code) ? 1 : nil)
        failure.helperLost = error.code == .helperLost
        failure.badBytes = [.corrupt, .incomplete, .noCodec, .unsupported].contains(error.code)
        return failure
    }

    /// NukeProcessing's processors for a request: fit inside the box, or cover it and keep the
    /// part the gravity names.
    static func processors(for request: ThumbnailRequest) -> [any ImageProcessing] {
        switch (request.mode, request.gravity) {
        case (.fit, _):
            return [ImageProcessors.Resize(size: request.box, contentMode: .aspectFit)]
        case (.fill, .center):
            return [ImageProcessors.Resize(size: request.box, contentMode: .aspectFill, crop: true)]
        case (.fill, let gravity):
            return [ImageProcessors.Resize(size: request.box, contentMode: .aspectFill),
                    ImageProcessors.Crop(size: request.box, gravity: gravity)]
        }
    }

    /// 415 for formats no codec reads, 413 for images over the limits (CPU time included), 503
    /// when a helper was lost, could not start or ran out of wall time (waiting for a processor
    /// on a busy machine is not the upload's fault: retry), 422 for the rest of what is wrong with
    /// the upload (truncated, corrupt, crashed an isolated decoder).
    private static func status(for error: ImageCodecError) -> HTTPResponse.Status {
        switch error.code {
        case .noCodec, .unsupported: return .unsupportedMediaType
        case .limitExceeded: return .contentTooLarge
        case .helperLost, .timedOut: return .serviceUnavailable
        case .internalFailure where error.stage == .registry: return .serviceUnavailable
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

/// Log values as one line: control characters (a codec message's newline) escaped.
enum LogEscaping {
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\\": out += "\\\\"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}" {
                    out += String(format: "\\u%04X", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
