import Foundation
import NukeCore
import NukeHEIF
import Testing

/// The HEIF header hook: the primary image's `ispe` size (turned by `irot`) and `pixi` bit depth,
/// read in Swift before libheif sees a byte, so that the core's limits hold for HEIC, HEIF and
/// AVIF as for every other format, in process and in a helper (issues 40 and 42).
@Suite struct HEIFHeaderTests {
    static let fixtures = ["alpha.heic", "bt709-limited.heic", "chroma422.heic", "lossless.heic", "photo.heic", "ten-bit.heic",
                           "thumbnail.heic", "alpha.avif", "bt709-limited.avif", "chroma444.avif", "photo.avif"]

    static func header(_ data: Data) throws -> ImageHeader {
        guard case .parsed(let header) = HEIFPlugin.parseHeader(data) else {
            throw ImageCodecError(.corrupt, stage: .header, message: "no header: \(HEIFPlugin.parseHeader(data))")
        }
        return header
    }

    /// The header's size is the decoded image's, for every fixture.
    @Test(arguments: fixtures)
    func theHeaderDeclaresTheDecodedSize(_ name: String) throws {
        let data = try HEIFTestPaths.fixture(name)
        let header = try Self.header(data)
        let image = try ImageDecoderRegistry.shared.decode(data).image
        #expect(header.size == ImageSize(width: image.width, height: image.height), "\(name): \(header)")
        #expect(header.type == ImageType(data))
    }

    /// `irot` turns the declared size (the `ispe`, which the standard puts before the turn).
    /// libheif 1.15's encoder wrote this file's `ispe` turned already (23 × 37 for a grid of
    /// 37 × 23 pixels), so the header reads 37 × 23 where libheif decodes 23 × 37: the sides the
    /// limits check are the same either way.
    @Test func aQuarterTurnSwapsTheSides() throws {
        let data = try Data(contentsOf: HEIFTestPaths.repositoryRoot.appendingPathComponent("Fixtures/output/irot-6.heic"))
        let header = try Self.header(data)
        let image = try ImageDecoderRegistry.shared.decode(data).image
        #expect(header.width == 37 && header.height == 23)
        #expect(Set([header.width, header.height]) == Set([image.width, image.height]))
    }

    @Test func theBitDepthComesFromPixi() throws {
        #expect(try Self.header(HEIFTestPaths.fixture("ten-bit.heic")).bitDepth == 10)
        #expect(try Self.header(HEIFTestPaths.fixture("photo.heic")).bitDepth == 8)
    }

    /// Until the `meta` box has arrived, the hook asks for more; the gate holds the bytes.
    @Test func aCutMetaBoxNeedsMoreData() throws {
        let data = try HEIFTestPaths.fixture("photo.heic")
        #expect(HEIFPlugin.parseHeader(data.prefix(8)) == .needsMoreData)
        #expect(HEIFPlugin.parseHeader(data.prefix(40)) == .needsMoreData)
        #expect(HEIFPlugin.parseHeader(Data("not a heif file at all".utf8)) == .unavailable)
    }

    /// The core refuses a HEIF over the limits at the header, from its own check, before
    /// libheif runs: the error is the core's (`stage: .header`), one-shot and fed in pieces.
    @Test func theCoreGatesHEIFOnItsHeader() throws {
        let data = try HEIFTestPaths.fixture("photo.heic")   // 64 × 48
        var context = ImageDecodingContext(data: data)
        context.limits.maxPixelCount = 64 * 48 - 1
        let error = try #require(throws: ImageCodecError.self) { try ImageDecoderRegistry.shared.decode(context) }
        #expect(error.code == .limitExceeded && error.stage == .header, "\(error)")
        #expect(error.message.contains("64×48"), "\(error)")

        var pieces = ImageDecodingContext(data: data.prefix(16))
        pieces.isCompleted = false
        pieces.limits.maxPixelCount = 64 * 48 - 1
        var decoder = try #require(ImageDecoderRegistry.shared.incrementalDecoder(for: pieces)).decoder
        for start in stride(from: 0, to: data.count, by: 256) {
            decoder.push(Data(data[start..<min(start + 256, data.count)]))
        }
        decoder.finish()
        let streamed = try #require(throws: ImageCodecError.self) { while true { if case .final = try decoder.next() { return } } }
        #expect(streamed.code == .limitExceeded && streamed.stage == .header, "\(streamed)")
    }

    /// Over the public corpora (when present): wherever the hook reads a header and libheif
    /// decodes, the header's size bounds the image's (`clap` may crop it) and, mostly, is it.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: HEIFTestPaths.repositoryRoot.appendingPathComponent("../shared/corpora/heif").standardized.path)))
    func theHeaderBoundsTheDecodedSizeOverTheCorpora() throws {
        let files = FileManager.default.enumerator(at: HEIFTestPaths.repositoryRoot.appendingPathComponent("../shared/corpora/heif").standardized, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { ["heic", "heif", "avif", "hif"].contains($0.pathExtension.lowercased()) } ?? []
        var (compared, equal) = (0, 0)
        var different: [String] = []
        var unread: [String] = []
        for file in files {
            let data = try Data(contentsOf: file)
            guard let image = try? ImageDecoderRegistry.shared.decode(data).image else { continue }
            guard case .parsed(let header) = HEIFPlugin.parseHeader(data) else {
                unread.append(file.lastPathComponent)
                continue
            }
            compared += 1
            if header.size == ImageSize(width: image.width, height: image.height) { equal += 1 } else {
                different.append("\(file.lastPathComponent): \(header.width)×\(header.height), decoded \(image.width)×\(image.height)")
            }
            #expect(header.width >= image.width && header.height >= image.height,
                    "\(file.lastPathComponent): header \(header), decoded \(image.width)×\(image.height)")
        }
        #expect(unread.isEmpty, "decoded without a header: \(unread)")
        #expect(compared > 10, "only \(compared) corpus files compared")
        #expect(equal * 5 >= compared * 4, "\(equal) of \(compared) equal; \(different)")
    }
}
