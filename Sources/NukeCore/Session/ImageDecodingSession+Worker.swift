import Foundation

extension ImageDecodingSession {
    /// The decoding state of one session: the data received so far and the one decoder.
    /// Used only on the session's serial queue.
    struct Worker {
        let configuration: Configuration
        /// The session's core, for the duration of one ``step(_:core:)``.
        private var core: Core!

        private var data = Data()
        private var type: ImageType?
        private var isFormatAnnounced = false
        private var isHeaderResolved = false
        private var isSizeAnnounced = false
        private var targetSize: ImageSize?
        private var decoder: (any ImageDecoding)?
        private var decodedCount = 0
        /// The last partial decode returned a preview, so the decoder may hold more for the
        /// same data (a chunk that completed several progressive scans).
        private var mayHavePendingPreview = false
        /// The highest scan or pass number a preview reported.
        private var lastScanNumber = 0
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

        var limits: ImageLimits { configuration.limits ?? configuration.registry.limits }

        /// Takes the new chunks and does what the data received so far allows.
        ///
        /// - Returns: `true` when the session ended.
        mutating func step(_ snapshot: Core.Snapshot, core: Core) -> Bool {
            self.core = core
            defer { self.core = nil }
            for chunk in snapshot.chunks { data.append(chunk) }
            return step(isFinished: snapshot.isFinished)
        }

        private mutating func step(isFinished: Bool) -> Bool {
            if type == nil, let sniffed = ImageType(data) {
                type = sniffed
                announceFormat(sniffed)
            }
            if !isHeaderResolved {
                if type != nil {
                    switch ImageHeader.parse(data) {
                    case .parsed(let header):
                        isHeaderResolved = true
                        do {
                            try limits.check(width: header.width, height: header.height, bytesPerPixel: 1,
                                             format: header.type, codec: nil)
                        } catch {
                            core.emit(.failure(error))
                            return true
                        }
                        isSizeAnnounced = true
                        core.emit(.sizeKnown(header))
                        targetSize = configuration.targetSize?(header)
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
            decodePreviewIfDue()
            return false
        }

        private func makeContext(isCompleted: Bool) -> ImageDecodingContext {
            // A partial context gets its own copy of the (still small) data: a decoder that keeps
            // its context must not share storage with the buffer appended to at every chunk.
            ImageDecodingContext(
                data: isCompleted ? data : data.withUnsafeBytes { Data($0) }, isCompleted: isCompleted, targetSize: targetSize, contentMode: configuration.contentMode,
                prefersHighBitDepth: configuration.prefersHighBitDepth, limits: limits,
                cancellation: core.cancellation, userInfo: configuration.userInfo
            )
        }

        private mutating func decodePreviewIfDue() {
            guard configuration.isProgressive, data.count > decodedCount || mayHavePendingPreview,
                  !core.cancellation.isCancelled else { return }
            if decoder == nil {
                // Cheap (decoders only look at magic bytes), but the partial context copies the
                // data: retry each time the data has doubled, so the copies add up to O(n) for
                // formats whose decoders never take partial data.
                guard data.count >= nextProbeSize else { return }
                decoder = configuration.registry.decoder(for: makeContext(isCompleted: false))
                if decoder == nil { nextProbeSize = data.count * 2 }
            }
            guard let decoder else { return }
            let now = ContinuousClock.now
            if let last = lastPreviewTime, configuration.minimumPreviewInterval > .zero {
                let due = last + configuration.minimumPreviewInterval
                if now < due {
                    if scheduledWake.map({ $0 < now }) ?? true {
                        scheduledWake = due
                        core.wake(after: due - now)
                    }
                    return
                }
            }
            decodedCount = data.count
            // A decoder returns one preview a call. One that numbers its scans or passes may
            // have more for the same data (a chunk that completed several): without a minimum
            // interval, ask again while the scan number grows; with one, come back when due.
            let drains = configuration.minimumPreviewInterval == .zero
            mayHavePendingPreview = false
            for _ in 0..<Self.maximumPreviewsPerChunk {
                if core.cancellation.isCancelled { return }
                let started = ContinuousClock.now
                guard let preview = decoder.decodePartiallyDownloadedData(data) else { return }
                let finished = ContinuousClock.now
                previewCount += 1
                lastPreviewTime = finished
                announce(from: preview)
                core.emit(.preview(preview, progress(for: preview, index: previewCount, started: started, finished: finished)))
                guard let scan = preview.userInfo[.scanNumberKey] as? Int, scan > lastScanNumber else { return }
                lastScanNumber = scan
                mayHavePendingPreview = true
                if !drains { break }
            }
            if mayHavePendingPreview, !drains {
                scheduledWake = finishedPreviewWake()
            }
        }

        /// A decoder returning previews for the same data without end is cut off after this many.
        static let maximumPreviewsPerChunk = 64

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
                let container: ImageContainer
                if let decoder {
                    container = try decoder.decode(data)
                } else {
                    container = try configuration.registry.decode(makeContext(isCompleted: true))
                }
                let finished = ContinuousClock.now
                announce(from: container)
                core.emit(.final(container, progress(for: container, index: previewCount + 1, started: started, finished: finished)))
            } catch {
                core.emit(.failure(wrap(error)))
            }
        }

        private func progress(for container: ImageContainer, index: Int, started: ContinuousClock.Instant,
                              finished: ContinuousClock.Instant) -> Progress {
            Progress(
                bytesReceived: data.count, index: index,
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
            core.emit(.sizeKnown(header))
        }

        private func wrap(_ error: any Error) -> ImageCodecError {
            let codec = decoder.map { String(describing: Swift.type(of: $0)) }
            if !(error is ImageCodecError), core.cancellation.isCancelled {
                return ImageCodecError(.cancelled, stage: .decoding, format: type, codec: codec, message: "cancelled")
            }
            return ImageCodecError.wrapping(error, stage: .decoding, format: type, codec: codec)
        }
    }
}
