import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm

/// Where the tests find their inputs: the repository (three levels above this file) and the
/// shared public corpora beside it.
enum HEIFTestPaths {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = repositoryRoot.appendingPathComponent("Fixtures/heif")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    static func reference(_ name: String) throws -> Bitmap {
        try Netpbm.decode(Data(contentsOf: fixtures.appendingPathComponent(name)))
    }
}
