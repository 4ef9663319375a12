import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import NukePixels

/// Where the tests find their inputs: the repository (three levels above this file) and the
/// shared public corpora beside it.
enum GIFTestPaths {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = repositoryRoot.appendingPathComponent("Fixtures/gif")
    static let corpora = repositoryRoot.appendingPathComponent("../shared/corpora/gif").standardizedFileURL
    static let giflib = corpora.appendingPathComponent("giflib-5.2.1_debian-source")
    static let pillowBomb = corpora.appendingPathComponent("python-pillow_Pillow/Tests/images/decompression_bomb.gif")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    /// The reference canvas of frame `index` of fixture `name` (ImageMagick's coalesce).
    static func reference(_ name: String, frame index: Int) throws -> Bitmap {
        let stem = name.replacingOccurrences(of: ".gif", with: "")
        return try Netpbm.decode(Data(contentsOf: fixtures.appendingPathComponent("\(stem).\(index).pam")))
    }

    /// Every `.gif` below the corpora folder, sorted; empty when it is absent.
    static func corpusFiles() -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: corpora.path) else { return [] }
        return walker.compactMap { $0 as? String }.filter { $0.lowercased().hasSuffix(".gif") }.sorted()
    }
}

/// One valid fixture of Fixtures/gif/manifest.json (the conformance kit's schema plus the
/// GIF fields `frames`, `loop` and `durations`).
struct GIFFixture: Decodable, Sendable, CustomStringConvertible {
    var name: String
    var kind: String
    var frames: Int
    var canvas: [Int]
    var loop: Int?
    var durations: [Double]

    var description: String { name }

    private enum CodingKeys: String, CodingKey { case file, kind, width, height, frames, loop, durations }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .file)
        kind = try c.decode(String.self, forKey: .kind)
        frames = try c.decodeIfPresent(Int.self, forKey: .frames) ?? 0
        canvas = [try c.decodeIfPresent(Int.self, forKey: .width) ?? 0, try c.decodeIfPresent(Int.self, forKey: .height) ?? 0]
        loop = try c.decodeIfPresent(Int.self, forKey: .loop)
        durations = try c.decodeIfPresent([Double].self, forKey: .durations) ?? []
    }

    private struct Manifest: Decodable { var fixtures: [GIFFixture] }

    /// Every valid fixture, sorted by name; empty when the manifest is absent.
    static let all: [GIFFixture] = {
        let url = GIFTestPaths.fixtures.appendingPathComponent("manifest.json")
        guard let data = try? Data(contentsOf: url),
              let manifest = try? JSONDecoder().decode(Manifest.self, from: data) else { return [] }
        return manifest.fixtures.filter { $0.kind == "valid" }.sorted { $0.name < $1.name }
    }()
}

let gifFixturesExist = !GIFFixture.all.isEmpty
let gifCorporaExist = FileManager.default.fileExists(atPath: GIFTestPaths.corpora.path)

extension Bitmap {
    /// Pixels that differ between two RGBA8 bitmaps, counting fully transparent pixels as equal
    /// whatever their colour; `nil` when the sizes differ.
    func visibleDifferences(from other: Bitmap) -> Int? {
        guard width == other.width, height == other.height else { return nil }
        let a = converted(to: .rgba8).packedBytes, b = other.converted(to: .rgba8).packedBytes
        var count = 0
        for i in stride(from: 0, to: a.count, by: 4) {
            if a[i + 3] == 0 && b[i + 3] == 0 { continue }
            if a[i] != b[i] || a[i + 1] != b[i + 1] || a[i + 2] != b[i + 2] || a[i + 3] != b[i + 3] { count += 1 }
        }
        return count
    }
}
