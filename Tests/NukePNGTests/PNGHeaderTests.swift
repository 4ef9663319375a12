import Foundation
import NukeCore
@testable import NukePNG
import Testing

/// Fixtures and corpora for header tests, found relative to this file.
enum PNGHeaderFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct PNGFixture: Sendable, CustomTestStringConvertible {
        var file: String
        var width: Int
        var height: Int
        var interlaced: Bool
        var testDescription: String { file }
    }

    /// The valid PNG fixtures of Fixtures/png/manifest.json.
    static let pngFixtures: [PNGFixture] = {
        let url = root.appendingPathComponent("Fixtures/png/manifest.json")
        guard let data = try? Data(contentsOf: url),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let fixtures = json["fixtures"] as? [[String: Any]] else { return [] }
        return fixtures.compactMap { entry in
            guard entry["kind"] as? String == "valid", let file = entry["file"] as? String,
                  let width = entry["width"] as? Int, let height = entry["height"] as? Int else { return nil }
            return PNGFixture(file: file, width: width, height: height, interlaced: entry["interlaced"] as? Bool ?? false)
        }
    }()
}

/// The PNG codec's header hook (``ImageDecoders/PNG/parseHeader(_:)``), through the registry.
@Suite struct PNGHeaderTests {
    /// The header through the registry's hooks, or `nil`.
    func header(_ data: Data) -> ImageHeader? {
        if case .parsed(let header) = registry.parseHeader(data) { return header }
        return nil
    }

    let registry = ImageDecoderRegistry(codecs: [.png])

    @Test(arguments: PNGHeaderFixtures.pngFixtures)
    func pngFixture(_ fixture: PNGHeaderFixtures.PNGFixture) throws {
        let data = try Data(contentsOf: PNGHeaderFixtures.root.appendingPathComponent("Fixtures/png/\(fixture.file)"))
        let header = try #require(self.header(data))
        #expect(header.type == .png)
        #expect(header.size == ImageSize(width: fixture.width, height: fixture.height))
        #expect(header.isProgressive == fixture.interlaced)
        #expect(registry.parseHeader(data.prefix(32)) == .needsMoreData)
    }

    @Test func pngAnimationAndAlpha() throws {
        func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let n = payload.count
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + Array(type.utf8) + payload + [0, 0, 0, 0]
        }
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let ihdr = chunk("IHDR", [0, 0, 1, 0, 0, 0, 0, 200, 8, 6, 0, 0, 1])
        let apng = signature + ihdr + chunk("acTL", [0, 0, 0, 12, 0, 0, 0, 0]) + chunk("IDAT", [1, 2, 3])
        let header = try #require(self.header(Data(apng)))
        #expect(header.size == ImageSize(width: 256, height: 200))
        #expect(header.frameCount == 12)
        #expect(header.isAnimated)
        #expect(header.hasAlpha == true)
        #expect(header.isProgressive)
        #expect(header.componentCount == 4)
        // IHDR alone: the size is known, the frame count not yet.
        #expect(self.header(Data(signature + ihdr))?.frameCount == nil)
    }

    @Test func pngZeroWidthIsUnavailable() throws {
        let data = try Data(contentsOf: PNGHeaderFixtures.root.appendingPathComponent("Fixtures/png/ihdr-zero-width.png"))
        #expect(registry.parseHeader(data) == .unavailable)
    }

}
