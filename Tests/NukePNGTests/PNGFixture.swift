import Foundation

/// One entry of `Fixtures/png/manifest.json`.
struct PNGFixture: Decodable, Sendable, CustomStringConvertible {
    var file: String
    var kind: String
    var reference: String?
    var reference16: String?
    var tolerance: Int?
    var width: Int?
    var height: Int?
    var interlaced: Bool?
    var orientation: Int?
    var icc_sha256: String?
    var icc_size: Int?
    var gamma: Double?
    var srgb_intent: Int?
    var expected_error: String?

    var description: String { file }

    private struct Manifest: Decodable {
        var fixtures: [PNGFixture]
    }

    static let all: [PNGFixture] = {
        guard let data = try? Data(contentsOf: PNGTestPaths.fixtures.appendingPathComponent("manifest.json")),
              let manifest = try? JSONDecoder().decode(Manifest.self, from: data) else { return [] }
        return manifest.fixtures
    }()

    static let valid = all.filter { $0.kind == "valid" }
    static let invalid = all.filter { $0.kind == "invalid" }
    static let interlaced = valid.filter { $0.interlaced == true }
}
