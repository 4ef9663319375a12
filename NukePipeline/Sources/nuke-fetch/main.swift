// `nuke fetch`: URLs through NukePipeline to a folder. `nuke fetch ...` runs this program (found
// beside `nuke` or on PATH), so that the `nuke` tool itself never links the HTTP stack.
import ArgumentParser
import Foundation
import NukeBMP
import NukeCore
import NukeFetch
import NukeGIF
import NukeHEIF
import NukeICO
import NukeIsolation
import NukeJPEG
import NukeJXL
import NukePipeline
import NukePNG
import NukeTIFF
import NukeWebP

// Started as a sandboxed decode helper by its own pool (--isolate): that, and nothing else.
IsolatedDecoding.runHelperIfRequested()
do {
    let command = try FetchCommand.parse()
    try await command.fetch()
} catch {
    FetchCommand.exit(withError: error)
}

struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nuke fetch",
        abstract: "Fetch images through NukePipeline: cached, shared, resumed, decoded to size and written to a folder.",
        discussion: """
        Prints a progress bar on a terminal, then a summary: downloaded, from cache, resumed, \
        deduplicated, failed with reasons. Exit status 1 when any URL failed.
        """
    )

    @Argument(help: "The URLs (http or https).")
    var urls: [String] = []

    @Option(name: .customLong("from"), help: "A file of URLs, one per line, as well.")
    var listFile: String?

    @Option(help: "Fit each image in a SIZE × SIZE box (decoded to size).")
    var size: Int?

    @Option(help: "The format written: jpeg, png, webp, ... (default: each image's own, else png).")
    var to: String?

    @Option(help: "The folder the images are written to.")
    var out: String

    @Option(help: "A disk cache folder, shared by later runs.")
    var cache: String?

    @Option(help: "The disk cache's size limit, in MB.")
    var cacheSize: Int = 500

    @Option(help: "Requests at once.")
    var jobs: Int = 8

    @Option(help: "Tries after a failure to load (a cut download resumes).")
    var retries: Int = 1

    @Flag(help: "Decode every format in a sandboxed helper process (default: only HEIC, HEIF and AVIF).")
    var isolate = false

    @Flag(name: .customLong("in-process"), help: "Decode every format in this process, HEIC, HEIF and AVIF included.")
    var inProcess = false

    func validate() throws {
        if isolate && inProcess { throw ValidationError("--isolate and --in-process exclude each other") }
    }

    func run() async throws { try await fetch() }

    func fetch() async throws {
        var list = urls
        if let listFile {
            list += try String(contentsOfFile: listFile, encoding: .utf8).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
        let parsed = try list.map { text -> URL in
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                throw ValidationError("not an http(s) URL: \(text)")
            }
            return url
        }
        guard !parsed.isEmpty else { throw ValidationError("no URLs: give them as arguments or with --from FILE") }
        var format: ImageType?
        if let to {
            guard let type = ImageType(filenameExtension: to) else { throw ValidationError("unknown format: \(to)") }
            format = type
        }
        // Each URL is fetched once (a repeat shares its first listing's outcome), so a memory
        // cache would only hold every decoded image to the end: memory is bounded by --jobs instead.
        var configuration = ImagePipeline.Configuration(imageCache: nil)
        // Strangers' bytes: the formats whose libraries crash on hostile files are decoded in
        // sandboxed helpers (this program in helper mode), as `nuke convert` does.
        if !inProcess {
            let pool = HelperPool(configuration: IsolationConfiguration(spareHelpers: 1, startsHelpersFromZygote: true))
            IsolatedDecoding.install(on: configuration.registry, policy: isolate ? .isolated : .knownCrashers, pool: pool)
        }
        if let cache {
            configuration.dataCache = try DataCache(path: URL(fileURLWithPath: cache), sizeLimit: cacheSize * 1_000_000)
        }
        configuration.maximumConcurrentDataLoads = max(1, jobs)
        let pipeline = ImagePipeline(configuration: configuration)
        var options = FetchRun.Options(urls: parsed, output: URL(fileURLWithPath: out), size: size, format: format)
        options.jobs = jobs
        options.retries = retries
        let isTerminal = isatty(STDERR_FILENO) == 1
        let summary = try await FetchRun(pipeline: pipeline, options: options).run { outcome, done, total in
            if isTerminal {
                let width = 30, filled = total == 0 ? width : width * done / total
                let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
                FileHandle.standardError.write(Data("\r\u{1B}[K\(bar) \(done)/\(total)  \(outcome.url.lastPathComponent.prefix(40))".utf8))
            }
        }
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        await configuration.dataCache?.flush()
        print(summary)
        if !summary.failed.isEmpty { throw ExitCode(1) }
    }
}
