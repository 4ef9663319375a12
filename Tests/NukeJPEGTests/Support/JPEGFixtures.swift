import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm

/// Paths of the JPEG fixtures (in the repository) and the public corpora (beside it).
enum JPEGFixtures {
    /// The repository root: four levels up from Tests/NukeJPEGTests/Support/JPEGFixtures.swift.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // Support
        .deletingLastPathComponent()   // NukeJPEGTests
        .deletingLastPathComponent()   // Tests
        .deletingLastPathComponent()   // repository root

    static let directory = root.appendingPathComponent("Fixtures/jpeg")
    static let corpora = root.deletingLastPathComponent().appendingPathComponent("shared/corpora/jpeg")
    static var corporaExist: Bool { FileManager.default.fileExists(atPath: corpora.path) }

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    static func reference(_ name: String) throws -> Bitmap {
        try Netpbm.decode(data(name))
    }

    static func corpus(_ path: String) throws -> Data {
        try Data(contentsOf: corpora.appendingPathComponent(path))
    }

    static let nuke = "kean_Nuke/Tests/Resources"
    static let pillow = "python-pillow_Pillow/Tests/images"
    static let turbo = "libjpeg-turbo_libjpeg-turbo/testimages"
}

/// `true` when ../shared/corpora exists beside the checkout.
let corporaExist = JPEGFixtures.corporaExist

extension Bitmap {
    /// The largest absolute difference between two bitmaps' samples (same size and format).
    func maxDifference(to other: Bitmap) -> Int {
        precondition(width == other.width && height == other.height && pixelFormat == other.pixelFormat)
        let a = packedBytes, b = other.packedBytes
        var result = 0
        for i in a.indices { result = Swift.max(result, abs(Int(a[i]) - Int(b[i]))) }
        return result
    }
}
