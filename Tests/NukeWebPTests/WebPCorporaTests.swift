import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import NukeWebP
import Testing

/// The still WebP files of ../shared/corpora/webp decode to exactly `dwebp`'s pixels, in one
/// call and fed in small chunks. Skipped when the corpora or `dwebp` (Debian's `webp`) are absent.
enum WebPCorpora {
    static let dwebp: String? = ["/usr/bin/dwebp", "/usr/local/bin/dwebp"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static let stillFiles: [String] = {
        guard let walker = FileManager.default.enumerator(atPath: WebPTestPaths.corpora.path) else { return [] }
        return walker.compactMap { $0 as? String }.filter { $0.lowercased().hasSuffix(".webp") }.sorted().filter { path in
            guard let data = try? Data(contentsOf: WebPTestPaths.corpora.appendingPathComponent(path)),
                  case .parsed(let header) = ImageDecoders.WebP.parseHeader(data) else { return false }
            return !header.isAnimated
        }
    }()

    /// dwebp's decode as PAM (RGBA).
    static func reference(_ url: URL) throws -> Bitmap {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-dwebp-\(UUID().uuidString).pam")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: dwebp ?? "dwebp")
        process.arguments = ["-quiet", url.path, "-pam", "-o", output.path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileReadCorruptFile) }
        return try Netpbm.decode(Data(contentsOf: output))
    }
}

@Suite(.enabled(if: WebPCorpora.dwebp != nil && !WebPCorpora.stillFiles.isEmpty))
struct WebPCorporaTests {
    @Test(arguments: WebPCorpora.stillFiles)
    func matchesDWebP(_ path: String) throws {
        let url = WebPTestPaths.corpora.appendingPathComponent(path)
        let data = try Data(contentsOf: url)
        let reference = try WebPCorpora.reference(url)
        let oneShot = try ImageDecoderRegistry.shared.decode(data).image.bitmap
        let comparison = ImageComparison(oneShot, reference: reference)
        #expect(comparison.isMatch, "one-shot: \(comparison)")

        // Fed 97 bytes at a time through one decoder.
        let first = data.prefix(97)
        let decoder = try #require(ImageDecoders.WebP(partiallyDownloadedData: first, context: ImageDecodingContext(data: first, isCompleted: false)))
        var end = 97
        while end < data.count {
            while decoder.decodePartiallyDownloadedData(data.prefix(end)) != nil {}
            end += 97
        }
        let chunked = try decoder.decode(data).image.bitmap
        #expect(chunked == oneShot)
    }
}
