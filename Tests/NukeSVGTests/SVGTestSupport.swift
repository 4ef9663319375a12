import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm

/// Where the tests find their inputs.
enum SVGTestPaths {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = repositoryRoot.appendingPathComponent("Fixtures/svg")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    static func reference(_ name: String) throws -> Bitmap {
        try Netpbm.decode(Data(contentsOf: fixtures.appendingPathComponent(name)))
    }
}

/// One valid fixture of Fixtures/svg/manifest.json with its SVG facts.
struct SVGFixture: Decodable, Sendable, CustomStringConvertible {
    var file: String
    var intrinsic: [Int]
    var viewbox: [Double]?
    var larger: [LargerValue]?
    var description: String { file }

    enum LargerValue: Decodable, Sendable {
        case number(Int), name(String)
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(Int.self) { self = .number(n) } else { self = .name(try c.decode(String.self)) }
        }
    }

    /// The second rendering: its size and reference file.
    var second: (size: ImageSize, reference: String)? {
        guard let larger, larger.count == 3, case .number(let w) = larger[0], case .number(let h) = larger[1], case .name(let file) = larger[2] else { return nil }
        return (ImageSize(width: w, height: h), file)
    }

    private struct Manifest: Decodable { var fixtures: [Entry] }
    private struct Entry: Decodable {
        var file: String
        var kind: String
        var intrinsic: [Int]?
        var viewbox: [Double]?
        var larger: [LargerValue]?
    }

    static let all: [SVGFixture] = {
        guard let data = try? Data(contentsOf: SVGTestPaths.fixtures.appendingPathComponent("manifest.json")),
              let manifest = try? JSONDecoder().decode(Manifest.self, from: data) else { return [] }
        return manifest.fixtures.compactMap { entry in
            guard entry.kind == "valid", let intrinsic = entry.intrinsic else { return nil }
            return SVGFixture(file: entry.file, intrinsic: intrinsic, viewbox: entry.viewbox, larger: entry.larger)
        }
    }()
}
