import ArgumentParser
import Foundation
import NukeCore
import NukePixels

extension ConvertCommand {
    /// The idle memory a batch's pixel buffer pool keeps for reuse: 512 MiB.
    static let batchPoolBudget = 512 << 20

    /// Converts every input file in parallel (at most `jobs` at a time) into `outputDirectory`.
    func runBatch(outputDirectory: String) async throws {
        guard let to, let format = OutputFormat(name: to) else { throw ExitCode.validationFailure }
        let items = try collectItems(outputDirectory: outputDirectory, format: format)
        var batch = Conversion(
            format: format,
            options: options,
            maxSize: maxSize?.size,
            keepsHighBitDepth: !eightBit,
            // One pool for the batch: a file's pixel buffers go back to it when the file is
            // written, and the next file of a similar size reuses them instead of new pages.
            // Up to 512 MiB of idle buffers are kept (a few 20-50 MP images' worth).
            allocator: .pool(PixelBufferPool(idleByteBudget: Self.batchPoolBudget))
        )
        batch.isUntrusted = untrusted
        batch.prefersFastScaling = fastScaling
        batch.appliesOrientation = appliesOrientation(for: format)
        batch.colorTarget = try colorTarget()
        batch.keepsStoredColor = color?.lowercased() == "keep"
        batch.decodingOptions = try resolvedDecodingOptions()
        batch.processors = processing.processors
        batch.frame = processing.frame
        let conversion = batch
        var progress = BatchProgress(total: items.count, isTerminal: Terminal.isStandardErrorATerminal)
        let start = ContinuousClock.now
        var results: [Conversion.Result] = []
        await withTaskGroup(of: Conversion.Result.self) { group in
            var pending = items.makeIterator()
            for _ in 0..<min(jobs, items.count) {
                guard let item = pending.next() else { break }
                group.addTask { conversion.run(input: item.input, output: item.output) }
            }
            for await result in group {
                results.append(result)
                progress.report(result)
                if let item = pending.next() {
                    group.addTask { conversion.run(input: item.input, output: item.output) }
                }
            }
        }
        progress.end()
        let failures = results.compactMap(\.error)
        let bytesIn = results.reduce(0) { $0 + $1.bytesIn }
        let bytesOut = results.reduce(0) { $0 + $1.bytesOut }
        let seconds = Terminal.seconds(ContinuousClock.now - start)
        print("Converted \(results.count - failures.count) of \(results.count) files to \(format)"
              + (failures.isEmpty ? "" : ", \(failures.count) failed")
              + "; \(Terminal.bytes(bytesIn)) in, \(Terminal.bytes(bytesOut)) out; \(String(format: "%.2f", seconds)) s")
        if !failures.isEmpty { throw ExitStatus.code(for: failures) }
    }

    /// The files to convert and where each goes: `DIR/a/b.jpg` → `OUT/a/b.<ext>`, a file
    /// argument `x/c.png` → `OUT/c.<ext>`.
    private func collectItems(outputDirectory: String, format: OutputFormat) throws -> [(input: String, output: String)] {
        var items: [(input: String, output: String)] = []
        let outputURL = URL(fileURLWithPath: outputDirectory)
        func destination(_ relative: String) -> String {
            let base = (relative as NSString).deletingPathExtension
            return outputURL.appendingPathComponent(base + "." + format.fileExtension).path
        }
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                // Reported as a failed file, so the rest of the batch still runs.
                items.append((path, destination((path as NSString).lastPathComponent)))
                continue
            }
            guard isDirectory.boolValue else {
                items.append((path, destination((path as NSString).lastPathComponent)))
                continue
            }
            let found = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter { relative in
                let full = (path as NSString).appendingPathComponent(relative)
                var isDir: ObjCBool = false
                let exists = FileManager.default.fileExists(atPath: full, isDirectory: &isDir)
                return exists && !isDir.boolValue && ImageType(filenameExtension: (relative as NSString).pathExtension) != nil
            }
            for relative in found.sorted() {
                items.append(((path as NSString).appendingPathComponent(relative), destination(relative)))
            }
        }
        return items
    }
}
