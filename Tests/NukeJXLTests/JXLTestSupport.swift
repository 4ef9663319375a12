import Foundation
import NukeCore
import NukeNetpbm

/// Where the tests find their inputs: the repository (three levels above this file).
enum JXLTestPaths {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = repositoryRoot.appendingPathComponent("Fixtures/jxl")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    static func reference(_ name: String) throws -> Bitmap {
        try Netpbm.decode(Data(contentsOf: fixtures.appendingPathComponent(name)))
    }
}

/// Decodes through the shared registry (which NukeJXL's record joined when linked).
func decodeJXL(_ data: Data, configure: (inout ImageDecodingContext) -> Void = { _ in }) throws -> ImageContainer {
    var context = ImageDecodingContext(data: data)
    configure(&context)
    return try ImageDecoderRegistry.shared.decode(context)
}
