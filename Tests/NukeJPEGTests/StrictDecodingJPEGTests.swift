import Foundation
import NukeCore
import NukeSession
@testable import NukeJPEG
import Testing

/// Corrupt entropy data: libjpeg warns and fills in grey; a strict decode refuses the file.
@Suite struct StrictDecodingJPEGTests {
    /// baseline-420.jpg with a stray restart marker in the middle of its entropy-coded data.
    func corruptJPEG() throws -> Data {
        var data = try JPEGFixtures.data("baseline-420.jpg")
        let sos = try #require(data.range(of: Data([0xFF, 0xDA])))
        let middle = sos.upperBound + (data.count - sos.upperBound) / 2
        data[middle] = 0xFF
        data[middle + 1] = 0xD3
        return data
    }

    func decode(_ data: Data, strict: Bool) throws -> ImageContainer {
        try ImageDecoderRegistry(codecs: [.jpeg]).decode(ImageDecodingContext(data: data, isStrict: strict))
    }

    @Test func warningsAreReported() throws {
        let container = try decode(try corruptJPEG(), strict: false)
        let warnings = try #require(container.userInfo[.warningsKey] as? ImageDecodingWarnings)
        #expect(warnings.count >= 1)
        #expect(warnings.first.contains("Corrupt JPEG data"))
    }

    @Test func strictDecodeRefusesWarnings() throws {
        let error = try #require(throws: ImageCodecError.self) { try decode(try corruptJPEG(), strict: true) }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("Corrupt JPEG data"))
    }

    /// A session whose decode request is strict refuses the file too, in chunks as it arrives;
    /// one made the plain way keeps its warnings.
    @Test(arguments: [true, false])
    func aStrictSessionRefusesWarnings(strict: Bool) async throws {
        let registry = ImageDecoderRegistry(codecs: [.jpeg])
        var context = registry.makeContext(for: Data(), isCompleted: false)
        context.isStrict = strict
        let session = ImageDecodingSession(configuration: .init(registry: registry, context: context))
        let data = try corruptJPEG()
        var offset = 0
        while offset < data.count {
            session.append(data[offset..<min(offset + 500, data.count)])
            offset += 500
        }
        session.finish()
        var final: ImageContainer?
        var failure: ImageCodecError?
        for await event in session.events {
            switch event {
            case .final(let container, _): final = container
            case .failure(let error): failure = error
            default: break
            }
        }
        if strict {
            #expect(failure?.code == .corrupt && failure?.message.contains("Corrupt JPEG data") == true, "\(String(describing: failure))")
        } else {
            #expect((final?.userInfo[.warningsKey] as? ImageDecodingWarnings)?.count ?? 0 >= 1, "\(String(describing: failure))")
        }
    }

    @Test func cleanFileDecodesStrictly() throws {
        let container = try decode(try JPEGFixtures.data("baseline-420.jpg"), strict: true)
        #expect(container.userInfo[.warningsKey] == nil)
    }
}

/// ``ImageDecoderRegistry/decode(_:reading:)`` with JPEG: progressive files consume their scans
/// without preview passes and end equal to a one-shot decode.
@Suite struct StreamedJPEGDecodeTests {
    @Test(arguments: ["baseline-420.jpg", "progressive.jpg", "progressive-arithmetic.jpg", "arithmetic.jpg"])
    func streamedEqualsWhole(_ name: String) throws {
        let data = try JPEGFixtures.data(name)
        let registry = ImageDecoderRegistry(codecs: [.jpeg])
        let whole = try registry.decode(data)
        var offset = 16
        let streamed = try registry.decode(ImageDecodingContext(data: data.prefix(16))) {
            guard offset < data.count else { return nil }
            let end = min(offset + 333, data.count)
            defer { offset = end }
            return data.subdata(in: offset..<end)
        }
        #expect(streamed.image.bitmap == whole.image.bitmap)
    }
}
