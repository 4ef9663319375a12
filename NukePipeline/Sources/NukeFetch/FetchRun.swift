import Foundation
import NukeCore
import NukePipeline

/// `nuke fetch`'s work, apart from its command line: each URL through the pipeline (decoded to a
/// thumbnail size when asked), encoded and written to a folder, with a tally of where each came
/// from and why any failed.
public struct FetchRun: Sendable {
    /// What to fetch and how.
    public struct Options: Sendable {
        /// The URLs, in order; a URL listed twice is fetched once.
        public var urls: [URL]
        /// The folder the images are written to (created when missing).
        public var output: URL
        /// Fit each image in a box of this size (`nil`: full size).
        public var size: Int?
        /// The format written (`nil`: each image's own when it can be encoded, else PNG).
        public var format: ImageType?
        /// Requests at once.
        public var jobs: Int = 8
        /// Tries again this many times after a failure to load; a second try resumes a cut download.
        public var retries: Int = 1

        /// Options with the defaults.
        public init(urls: [URL], output: URL, size: Int? = nil, format: ImageType? = nil) {
            self.urls = urls
            self.output = output
            self.size = size
            self.format = format
        }
    }

    /// What happened to one URL.
    public struct Outcome: Sendable {
        /// The URL.
        public var url: URL
        /// The file written, or why there is none.
        public var result: Result<URL, FetchFailure>
        /// Which cache served it (`nil`: loaded).
        public var cacheType: ImageResponse.CacheType?
        /// Bytes received from the origin.
        public var bytesDownloaded: Int64
        /// `true` when a cut download was resumed.
        public var resumed: Bool
        /// `true` when it shared work with another request (or was listed again).
        public var deduplicated: Bool

        /// `true` when a file was written.
        public var isSuccess: Bool {
            if case .success = result { return true }
            return false
        }
    }

    /// Why a URL has no file: the pipeline's or the encoder's message.
    public struct FetchFailure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The tally.
    public struct Summary: Sendable, CustomStringConvertible {
        /// One per URL listed, in order.
        public var outcomes: [Outcome]

        /// URLs loaded from the origin.
        public var downloaded: Int { outcomes.filter { $0.cacheType == nil && !$0.deduplicated && $0.isSuccess }.count }
        /// URLs a cache served.
        public var fromCache: Int { outcomes.filter { $0.cacheType != nil && $0.isSuccess }.count }
        /// Downloads resumed after a cut.
        public var resumed: Int { outcomes.filter(\.resumed).count }
        /// URLs that shared another's work.
        public var deduplicated: Int { outcomes.filter { $0.deduplicated && $0.cacheType == nil && $0.isSuccess }.count }
        /// The URLs that failed.
        public var failed: [Outcome] { outcomes.filter { !$0.isSuccess } }
        /// Bytes from origins.
        public var bytesDownloaded: Int64 { outcomes.reduce(0) { $0 + $1.bytesDownloaded } }

        public var description: String {
            var lines = ["\(outcomes.count) URLs: \(downloaded) downloaded (\(Self.bytes(bytesDownloaded))), \(fromCache) from cache, "
                + "\(resumed) resumed, \(deduplicated) deduplicated, \(failed.count) failed"]
            for outcome in failed {
                if case .failure(let failure) = outcome.result { lines.append("  failed \(outcome.url.absoluteString): \(failure)") }
            }
            return lines.joined(separator: "\n")
        }

        static func bytes(_ count: Int64) -> String {
            count < 1_000_000 ? String(format: "%.1f KB", Double(count) / 1000) : String(format: "%.1f MB", Double(count) / 1_000_000)
        }
    }

    /// The pipeline the run uses.
    public let pipeline: ImagePipeline
    /// The options.
    public let options: Options

    /// A run of `options` through `pipeline`.
    public init(pipeline: ImagePipeline, options: Options) {
        self.pipeline = pipeline
        self.options = options
    }

    /// Fetches every URL, `jobs` at once; `progress` is told of each outcome as it comes.
    public func run(progress: @Sendable (Outcome, _ done: Int, _ total: Int) -> Void = { _, _, _ in }) async throws -> Summary {
        try FileManager.default.createDirectory(at: options.output, withIntermediateDirectories: true)
        let names = Self.fileNames(for: options.urls, format: options.format)
        var firstIndex: [URL: Int] = [:]
        for (index, url) in options.urls.enumerated() where firstIndex[url] == nil { firstIndex[url] = index }
        let unique = options.urls.indices.filter { firstIndex[options.urls[$0]] == $0 }
        var outcomes = [Outcome?](repeating: nil, count: options.urls.count)
        var done = 0
        try await withThrowingTaskGroup(of: (Int, Outcome).self) { group in
            var next = unique.makeIterator()
            func startNext() {
                guard let index = next.next() else { return }
                group.addTask { (index, await fetch(options.urls[index], to: names[index])) }
            }
            for _ in 0..<max(1, options.jobs) { startNext() }
            while let (index, outcome) = try await group.next() {
                outcomes[index] = outcome
                done += 1
                progress(outcome, done, unique.count)
                startNext()
            }
        }
        // A URL listed again shares its first listing's outcome.
        for index in outcomes.indices where outcomes[index] == nil {
            var repeated = outcomes[firstIndex[options.urls[index]]!]!
            repeated.deduplicated = true
            repeated.bytesDownloaded = 0
            repeated.resumed = false
            outcomes[index] = repeated
        }
        return Summary(outcomes: outcomes.map { $0! })
    }

    private func fetch(_ url: URL, to name: String) async -> Outcome {
        var request = ImageRequest(url: url)
        if let size = options.size {
            request.thumbnail = ImageRequest.Thumbnail(size: ImageSize(width: size, height: size))
        }
        var lastError: (any Error)?
        for _ in 0...max(0, options.retries) {
            do {
                let response = try await pipeline.imageTask(with: request).response
                let file = try write(response.container, name: name)
                return Outcome(url: url, result: .success(file), cacheType: response.cacheType,
                               bytesDownloaded: response.metrics.bytesDownloaded, resumed: response.metrics.bytesResumed > 0,
                               deduplicated: response.metrics.isDeduplicated)
            } catch ImagePipeline.Error.dataLoadingFailed(let reason) {
                lastError = FetchFailure(description: "loading failed: \(reason)")
                // A refused connection, a name that does not resolve, a refused redirect: the same
                // again would fail the same way. A cut or a time-out is tried again (and resumed).
                if reason is HTTPDataLoader.LoadError { break }
            } catch {
                lastError = error
                break
            }
        }
        return Outcome(url: url, result: .failure(FetchFailure(description: String(describing: lastError!))),
                       cacheType: nil, bytesDownloaded: 0, resumed: false, deduplicated: false)
    }

    private func write(_ container: ImageContainer, name: String) throws -> URL {
        let encoders = pipeline.configuration.encoderRegistry
        let type = options.format ?? container.type.flatMap { encoders.encoder(for: $0) != nil ? $0 : nil } ?? .png
        let data = try encoders.encode(container.image, as: type)
        let file = options.output.appendingPathComponent(name + "." + (type.filenameExtensions.first ?? "img"))
        try data.write(to: file, options: .atomic)
        return file
    }

    /// A file name for each URL: its last path component without extension, reduced to
    /// `[A-Za-z0-9._-]`, numbered when two URLs would share one.
    static func fileNames(for urls: [URL], format: ImageType?) -> [String] {
        var used: [String: Int] = [:]
        var byURL: [URL: String] = [:]
        return urls.map { url in
            if let name = byURL[url] { return name }
            let stem = url.deletingPathExtension().lastPathComponent
            var base = String(stem.unicodeScalars.map { scalar in
                scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar)) ? Character(scalar) : "_"
            })
            if base.isEmpty || base.allSatisfy({ $0 == "." }) { base = "image" }
            let count = used[base, default: 0] + 1
            used[base] = count
            let name = count == 1 ? base : "\(base)-\(count)"
            byURL[url] = name
            return name
        }
    }
}
