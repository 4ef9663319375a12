import Foundation

/// Where the tests find their inputs: the repository (three levels above this file) and
/// the shared public corpora beside it.
enum PNGTestPaths {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = repositoryRoot.appendingPathComponent("Fixtures/png")
    static let corpora = repositoryRoot.appendingPathComponent("../shared/corpora/png").standardizedFileURL
    static let pngSuite = corpora.appendingPathComponent("pnggroup_libpng/contrib/pngsuite")
    static let crashers = corpora.appendingPathComponent("pnggroup_libpng/contrib/testpngs/crashers")
    static let testPNGs = corpora.appendingPathComponent("pnggroup_libpng/contrib/testpngs")
    static let pillow = corpora.appendingPathComponent("python-pillow_Pillow/Tests/images")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    /// The `.png` files in a corpus folder, sorted; empty when it is absent.
    static func pngFiles(in folder: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".png") }.sorted()
    }
}

/// `true` when `../shared/corpora/png` exists beside the checkout.
let pngCorporaExist = FileManager.default.fileExists(atPath: PNGTestPaths.corpora.path)

/// `true` when `Fixtures/png/manifest.json` exists.
let pngFixturesExist = FileManager.default.fileExists(atPath: PNGTestPaths.fixtures.appendingPathComponent("manifest.json").path)
