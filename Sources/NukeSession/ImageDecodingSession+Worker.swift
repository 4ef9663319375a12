#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

extension ImageDecodingSession {
    /// The decoding state of one session: the data received so far and the one decoder.
    /// Used only on the session's serial queue. Once a decoder exists, the worker keeps only the
    /// bytes it has not given it yet: the decoder holds what it needs of the rest.
    struct Worker {
        let configuration: Configuration
        /// The session's core, for the duration of one ``step(_:core:)``.
        private var core: Core!

        /// The bytes received; once there is a decoder, only those it has not been given.
        private var data = Data()
        /// Every byte received.
        private var receivedCount = 0
        private var type: ImageType?
        private var isFormatAnnounced = false
        private var isHeaderResolved = false
        private var isSizeAnnounced = false
        private var targetSize: ImageSize?
        /// The header made from the first image decoded, for a format no header hook reads.
        private var derivedHeader: ImageHeader?
        /// The session's one decoder, fed only the bytes it has not seen.
        private var decoder: (any IncrementalImageDecoding)?
        private var codec: ImageCodecInfo?
        /// Previews may be waiting in the decoder for bytes it already has (a minimum preview
        /// interval stopped asking).
        private var mayHavePendingPreview = false
        /// When no decoder accepted the partial data, ask again once this much has arrived.
        private var nextProbeSize = 0
        private var previewCount = 0
        private var lastPreviewTime: ContinuousClock.Instant?
        private var scheduledWake: ContinuousClock.Instant?

        /// Bytes to wait for before giving up on sniffing and offering the data to decoders
        /// registered without a format.
        static let sniffLength = 64

        init(configuration: Configuration) {
            self.configuration = configuration
        }

        var limits: ImageLimits { configuration.context.limits }

        /// Takes the new chunks and does what the data received so far allows.
        ///
        /// - Returns: `true` when the session ended.
        mutating func step(_ snapshot: Core.Snapshot, core: Core) -> Bool {
            self.core = core
            defer { self.core = nil }
            for chunk in snapshot.chunks {
                if data.isEmpty { data = chunk } else { data.append(chunk) }
                receivedCount += chunk.count
            }
            return step(isFinished: snapshot.isFinished)
        }

        /// The bytes the worker holds (for tests).
        var heldByteCount: Int { data.count }

        private mutating func step(isFinished: Bool) -> Bool {
            if type == nil, decoder == nil, let sniffed = ImageType(data) {
                type = sniffed
                announceFormat(sniffed)
            }
            if !isHeaderResolved {
                if type != nil {
                    switch configuration.registry.parseHeader(data) {
                    case .parsed(let header):
                        isHeaderResolved = true
                        // The target size first: a decode to size is checked at the size it decodes.
                        targetSize = configuration.targetSize?(header)
                        do {
                            try limits.check(header: header, context: makeContext(isCompleted: false), inputByteCount: nil)
                        } catch {
                            core.emit(.failure(error))
                            return true
                        }
                        isSizeAnnounced = true
                        core.emit(.sizeKnown(header))
                    case .needsMoreData:
                        if !isFinished { return false }
                        isHeaderResolved = true
                    case .unavailable:
                        isHeaderResolved = true
                    }
                } else {
                    if !isFinished && data.count < Self.sniffLength { return false }
                    isHeaderResolved = true
                }
            }
            if isFinished {
                decodeFinal()
                return true
            }
            return decodePreviewIfDue()
        }

        private func makeContext(isCompleted: Bool) -> ImageDecodingContext {
            // A partial context gets its own copy of the (still small) data: a decoder that keeps
            // its context must not share storage with the buffer appended to at every chunk.
            var context = configuration.context
            context.data = isCompleted ? data : data.withUnsafeBytes { Data($0) }
            context.isCompleted = isCompleted
            context.type = ImageType(context.data)
            context.targetSize = targetSize ?? configuration.context.targetSize
            context.cancellation = core.cancellation
            return context
        }

        /// Feeds the decoder the new bytes and reports the previews they allow.
        ///
        /// - Returns: `true` when the session ended (the final image arrived early, or a failure).
        private mutating func decodePreviewIfDue() -> Bool {
            guard configuration.isProgressive, !core.cancellation.isCancelled else { return false }
            if decoder == nil {
                // Cheap (decoders only look at magic bytes), but the partial context copies the
                // data: retry each time the data has doubled, so the copies add up to O(n) for
                // formats whose decoders never take partial data.
                guard data.count >= nextProbeSize else { return false }
                if let (made, info) = configuration.registry.incrementalDecoder(for: makeContext(isCompleted: false)) {
                    decoder = made
                    codec = info
                } else {
                    nextProbeSize = data.count * 2
                    return false
                }
            }
            let hasNewBytes = pushNewBytes()
            guard hasNewBytes || mayHavePendingPreview else { return false }
            let now = ContinuousClock.now
            if let last = lastPreviewTime, configuration.minimumPreviewInterval > .zero {
                let due = last + configuration.minimumPreviewInterval
                if now < due {
                    mayHavePendingPreview = true
                    if scheduledWake.map({ $0 < now }) ?? true {
                        scheduledWake = due
                        core.wake(after: due - now)
                    }
                    return false
                }
            }
            // Every preview the bytes allow, one event at a time: without a minimum interval all
            // of them now; with one, the first now and the rest when it is due.
            mayHavePendingPreview = false
            for _ in 0..<Self.maximumEventsPerStep {
                if core.cancellation.isCancelled { return false }
                let started = ContinuousClock.now
                let event: ImageDecodingEvent
                do {
                    guard var current = decoder else { return false }
                    decoder = nil
                    defer { decoder = current }
                    event = try current.next()
                } catch {
                    core.emit(.failure(wrap(error)))
                    return true
                }
                let finished = ContinuousClock.now
                switch event {
                case .needsMoreData:
                    return false
                case .header(let header):
                    announce(header)
                case .preview(let preview):
                    previewCount += 1
                    lastPreviewTime = finished
                    announce(from: preview)
                    core.emit(.preview(preview, progress(for: preview, index: previewCount, started: started, finished: finished)))
                    if configuration.minimumPreviewInterval > .zero {
                        mayHavePendingPreview = true
                        scheduledWake = finishedPreviewWake()
                        return false
                    }
                case .final(let container):
                    announce(from: container)
                    core.emit(.final(container, progress(for: container, index: previewCount + 1, started: started, finished: finished)))
                    return true
                }
            }
            core.emit(.failure(ImageCodecError(
                .internalFailure, stage: .decoding, format: type, codec: codec?.codecDescription,
                message: "the decoder reported \(Self.maximumEventsPerStep) events without asking for more data")))
            return true
        }

        /// Pushes the bytes the decoder has not seen, and lets go of them; `true` when there were any.
        private mutating func pushNewBytes() -> Bool {
            guard !data.isEmpty, var current = decoder else { return false }
            decoder = nil
            current.push(data)
            decoder = current
            data = Data()
            return true
        }

        /// A decoder reporting this many events for the same bytes is broken: the session fails.
        static let maximumEventsPerStep = 100_000

        /// Schedules a wake-up when the next preview is due, for previews still pending.
        private mutating func finishedPreviewWake() -> ContinuousClock.Instant? {
            guard let last = lastPreviewTime else { return nil }
            let due = last + configuration.minimumPreviewInterval
            core.wake(after: due - ContinuousClock.now)
            return due
        }

        private mutating func decodeFinal() {
            let started = ContinuousClock.now
            do {
                var container: ImageContainer
                if decoder != nil {
                    _ = pushNewBytes()
                    guard var current = decoder else { return }
                    decoder = nil
                    current.finish()
                    container = try current.finalImage(format: type)
                } else {
                    container = try configuration.registry.decode(makeContext(isCompleted: true))
                }
                announce(from: container)
                // A format whose size no header hook read was decoded without a target: the
                // caller's size for the header its image gives, finished here, as a one-shot
                // decode with that target would be.
                if targetSize == nil, configuration.context.targetSize == nil, let header = derivedHeader,
                   let target = configuration.targetSize?(header) {
                    var context = makeContext(isCompleted: true)
                    context.targetSize = target
                    container.finishDecodeToSize(for: context)
                }
                let finished = ContinuousClock.now
                core.emit(.final(container, progress(for: container, index: previewCount + 1, started: started, finished: finished)))
            } catch {
                core.emit(.failure(wrap(error)))
            }
        }

        private func progress(for container: ImageContainer, index: Int, started: ContinuousClock.Instant,
                              finished: ContinuousClock.Instant) -> Progress {
            Progress(
                bytesReceived: receivedCount, index: index,
                scanNumber: container.userInfo[.scanNumberKey] as? Int,
                rowCount: container.userInfo[.rowCountKey] as? Int,
                elapsed: finished - core.startTime, decodeDuration: finished - started
            )
        }

        private mutating func announceFormat(_ type: ImageType) {
            guard !isFormatAnnounced else { return }
            isFormatAnnounced = true
            core.emit(.formatKnown(type))
        }

        /// Emits the size event from a header the decoder reported, unless a hook already did.
        private mutating func announce(_ header: ImageHeader) {
            announceFormat(header.type)
            guard !isSizeAnnounced else { return }
            isSizeAnnounced = true
            core.emit(.sizeKnown(header))
        }

        /// Emits the format and size events a parser could not, from the first image decoded.
        private mutating func announce(from container: ImageContainer) {
            if let type = container.type ?? type { announceFormat(type) }
            guard !isSizeAnnounced else { return }
            isSizeAnnounced = true
            let size = container.userInfo[.originalSizeKey] as? ImageSize
                ?? ImageSize(width: container.image.width, height: container.image.height)
            let header = ImageHeader(
                type: container.type ?? type ?? ImageType(rawValue: "public.image"),
                width: size.width, height: size.height,
                bitDepth: container.image.bitmap.pixelFormat.bitsPerChannel,
                componentCount: container.image.bitmap.pixelFormat.channelCount,
                hasAlpha: container.image.hasAlpha,
                isProgressive: container.userInfo[.isProgressiveKey] as? Bool ?? false,
                frameCount: container.isPreview ? nil : container.image.frames.count,
                isAnimated: container.image.isAnimated,
                orientation: container.image.orientation
            )
            derivedHeader = header
            core.emit(.sizeKnown(header))
        }

        private func wrap(_ error: any Error) -> ImageCodecError {
            let codec = self.codec?.codecDescription
            if !(error is ImageCodecError), core.cancellation.isCancelled {
                return ImageCodecError(.cancelled, stage: .decoding, format: type, codec: codec, message: "cancelled")
            }
            return ImageCodecError.wrapping(error, stage: .decoding, format: type, codec: codec)
        }
    }
}
