import ArgumentParser
import Foundation
import NukeCore
import NukeSession

/// `nuke progressive`: replays a file through an ``ImageDecodingSession`` as if it were being
/// downloaded, and writes every preview.
struct ProgressiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "progressive",
        abstract: "Replay a file through the progressive decoding session and write every preview.",
        discussion: """
        The file is split into chunks and appended to a session as a download would. By default \
        the next chunk is appended once the session has looked at the previous one, so each \
        chunk gets its chance at a preview; --coalesce appends without waiting (the session then \
        merges chunks that arrive during a decode). Previews are written as \
        preview-NN-scan-SS.png (or -rows-RRRR for row-by-row previews), the final image as \
        final.png. One line per event: bytes received, scan or rows, milliseconds.
        """
    )

    @Argument(help: "The image file.")
    var file: String

    @Option(help: "Split the file into N chunks of equal size. Default: 32.")
    var chunks: Int?

    @Option(help: "Split the file into chunks of B bytes.")
    var chunkSize: Int?

    @Option(help: "The directory to write previews and the final image to.")
    var outputDir: String

    @Option(help: "Minimum milliseconds between previews.")
    var interval: Int = 0

    @Option(help: "Milliseconds to wait between chunks, to simulate a slow network.")
    var delay: Int = 0

    @Flag(help: "Append chunks without waiting for the session to look at each one.")
    var coalesce = false

    @Option(help: "Format of the written images: png or pam.")
    var format: String = "png"

    func validate() throws {
        if chunks != nil && chunkSize != nil { throw ValidationError("give either --chunks or --chunk-size, not both") }
        if let chunks, chunks < 1 { throw ValidationError("--chunks must be at least 1") }
        if let chunkSize, chunkSize < 1 { throw ValidationError("--chunk-size must be at least 1") }
        guard let written = OutputFormat(name: format), written.type == .png || written.holdsDecodedPixels else {
            throw ValidationError("--format must be png, pam or ppm")
        }
        guard interval >= 0, delay >= 0 else { throw ValidationError("--interval and --delay cannot be negative") }
    }

    func run() async throws {
        let data: Data
        do {
            data = try ImageFiles.read(file)
        } catch {
            Terminal.error("error: \(error)")
            throw ExitStatus.io
        }
        let size = chunkSize ?? max(1, (data.count + (chunks ?? 32) - 1) / (chunks ?? 32))
        let pieces = stride(from: 0, to: data.count, by: size).map { data.subdata(in: $0..<min($0 + size, data.count)) }
        guard let writtenFormat = OutputFormat(name: format) else { throw ExitCode.validationFailure }
        try FileManager.default.createDirectory(atPath: outputDir, withIntermediateDirectories: true)

        let session = ImageDecodingSession(configuration: .init(minimumPreviewInterval: .milliseconds(interval)))
        print("\(file): \(data.count) bytes in \(pieces.count) chunks of \(size) bytes")
        let producer = Task { [coalesce, delay] in
            for piece in pieces {
                session.append(piece)
                if !coalesce { await session.waitUntilProcessed() }
                if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
            }
            session.finish()
        }
        var failure: ImageCodecError?
        var writeErrors: [any Error] = []
        for await event in session.events {
            switch event {
            case .formatKnown(let type):
                print("format   \(type.name)")
            case .sizeKnown(let header):
                print("size     \(header)")
            case .preview(let container, let progress):
                let name = Self.previewName(progress, extension: writtenFormat.fileExtension)
                let error = write(container, as: writtenFormat, name: name)
                if let error { writeErrors.append(error) }
                print(line("preview", progress, container, name: error == nil ? name : "(not written)"))
            case .final(let container, let progress):
                let name = "final." + writtenFormat.fileExtension
                let error = write(container, as: writtenFormat, name: name)
                if let error { writeErrors.append(error) }
                print(line("final  ", progress, container, name: error == nil ? name : "(not written)"))
            case .failure(let error):
                failure = error
            }
        }
        producer.cancel()
        if let failure {
            Terminal.error(path: file, failure)
            throw ExitStatus.code(for: [failure])
        }
        if !writeErrors.isEmpty { throw ExitStatus.code(for: writeErrors) }
    }

    /// `preview-01-scan-03.png`, `preview-02-rows-0120.png` or `preview-03.png`.
    static func previewName(_ progress: ImageDecodingSession.Progress, extension ext: String) -> String {
        let index = String(format: "%02d", progress.index)
        if let scan = progress.scanNumber { return "preview-\(index)-scan-\(String(format: "%02d", scan)).\(ext)" }
        if let rows = progress.rowCount { return "preview-\(index)-rows-\(String(format: "%04d", rows)).\(ext)" }
        return "preview-\(index).\(ext)"
    }

    private func line(_ kind: String, _ progress: ImageDecodingSession.Progress, _ container: ImageContainer, name: String) -> String {
        var parts = [kind, String(format: "%3d", progress.index), "\(progress.bytesReceived) bytes".padding(toLength: 14, withPad: " ", startingAt: 0)]
        if let scan = progress.scanNumber { parts.append("scan \(scan)") }
        if let rows = progress.rowCount { parts.append("rows \(rows)") }
        parts.append("\(container.image.width)×\(container.image.height)")
        parts.append("decode \(Terminal.milliseconds(progress.decodeDuration))")
        parts.append("at \(Terminal.milliseconds(progress.elapsed))")
        parts.append(name)
        return parts.joined(separator: "  ")
    }

    /// Writes an image; returns the error instead of throwing so the replay goes on.
    private func write(_ container: ImageContainer, as format: OutputFormat, name: String) -> (any Error)? {
        let path = URL(fileURLWithPath: outputDir).appendingPathComponent(name).path
        do {
            try ImageFiles.write(try format.encode(container.image, options: ImageEncodingOptions()), to: path)
            return nil
        } catch {
            Terminal.error(path: path, error)
            return error
        }
    }
}
