import Foundation
import NukeCore
import NukePixels
@testable import NukeConformance
import Testing

/// Tests of the kit's building blocks: image comparison, SHA-256, manifest parsing.
struct ConformanceKitComparisonTests {
    static func ramp(_ width: Int, _ height: Int, _ format: PixelFormat, seed: Int = 0) -> Bitmap {
        let count = width * height * format.bytesPerPixel
        return Bitmap(width: width, height: height, pixelFormat: format, bytes: (0..<count).map { UInt8(($0 * 29 + seed) & 0xFF) })
    }

    @Test func identicalBitmapsMatchWithInfinitePSNR() {
        let bitmap = Self.ramp(4, 3, .rgb8)
        let comparison = ImageComparison(bitmap, reference: bitmap)
        #expect(comparison.isMatch)
        #expect(comparison.maxDifference == 0)
        #expect(comparison.psnr == .infinity)
        #expect(comparison.firstDifference == nil)
    }

    @Test func reportsTheFirstDifferenceAndHonoursTolerance() throws {
        let reference = Self.ramp(4, 3, .rgb8)
        var bytes = reference.bytes
        bytes[(1 * 4 + 2) * 3 + 1] &+= 3   // (2, 1) green
        bytes[(2 * 4 + 3) * 3 + 2] &+= 1   // (3, 2) blue
        let decoded = Bitmap(width: 4, height: 3, pixelFormat: .rgb8, bytes: bytes)
        let exact = ImageComparison(decoded, reference: reference)
        #expect(!exact.isMatch)
        #expect(exact.maxDifference == 3)
        #expect(exact.differingSampleCount == 2)
        let first = try #require(exact.firstDifference)
        #expect(first.x == 2 && first.y == 1 && first.channel == 1)
        #expect(first.actual[1] - first.expected[1] == 3)
        #expect(exact.description.contains("first at (2, 1) channel 1"))
        #expect(exact.psnr.isFinite && exact.psnr > 40)
        #expect(ImageComparison(decoded, reference: reference, tolerance: .maxDifference(3)).isMatch)
        #expect(!ImageComparison(decoded, reference: reference, tolerance: .maxDifference(2)).isMatch)
        #expect(ImageComparison(decoded, reference: reference, tolerance: .minimumPSNR(40)).isMatch)
        #expect(!ImageComparison(decoded, reference: reference, tolerance: .minimumPSNR(80)).isMatch)
    }

    @Test func widensLosslesslyButNeverNarrows() {
        let gray = Self.ramp(3, 2, .gray8)
        #expect(ImageComparison(gray, reference: gray.converted(to: .rgb8)).isMatch)
        #expect(ImageComparison(gray, reference: gray.converted(to: .rgba16)).isMatch)
        let rgba = Self.ramp(3, 2, .rgba8)
        let narrowed = ImageComparison(rgba, reference: rgba.converted(to: .rgb8))
        #expect(!narrowed.isMatch)
        #expect(narrowed.layoutMismatch?.contains("rgba8") == true)
        let wide = Self.ramp(3, 2, .rgb16)
        #expect(!ImageComparison(wide, reference: wide.converted(to: .rgb8)).isMatch)
        #expect(!ImageComparison(Self.ramp(3, 2, .rgb8), reference: Self.ramp(3, 2, .gray8)).isMatch)
        #expect(ImageComparison.isLosslessWidening(from: .rgb8, to: .rgba16))
        #expect(!ImageComparison.isLosslessWidening(from: .grayAlpha8, to: .rgb8))
    }

    @Test func sizeMismatchIsReported() {
        let comparison = ImageComparison(Self.ramp(3, 2, .rgb8), reference: Self.ramp(2, 3, .rgb8))
        #expect(!comparison.isMatch)
        #expect(comparison.description.contains("size 3×2 differs from the reference's 2×3"))
    }

    @Test func comparesSixteenBitSamples() {
        let reference = Self.ramp(2, 2, .gray16)
        var bytes = reference.bytes
        bytes[1] &+= 1   // +256 on a little-endian machine's first sample
        let comparison = ImageComparison(Bitmap(width: 2, height: 2, pixelFormat: .gray16, bytes: bytes), reference: reference)
        #expect(comparison.maxDifference == 256)
        #expect(ImageComparison(Bitmap(width: 2, height: 2, pixelFormat: .gray16, bytes: bytes), reference: reference, tolerance: .maxDifference(256)).isMatch)
    }

    @Test func premultipliedPixelsAreComparedStraight() {
        let straight = Bitmap(width: 1, height: 1, pixelFormat: .rgba8, bytes: [200, 100, 50, 255])
        #expect(ImageComparison(straight.premultiplied(), reference: straight).isMatch)
    }

    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func sha256MatchesTheStandardVectors(_ input: String, _ digest: String) {
        #expect(FixtureDigest.sha256Hex(Data(input.utf8)) == digest)
    }

    @Test func sha256OfAMillionAs() {
        #expect(FixtureDigest.sha256Hex(Data(repeating: 0x61, count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func manifestParsesSnakeCaseKeysAndResolvesFiles() throws {
        let json = """
        {"format": "jpeg", "fixtures": [
          {"file": "a.jpg", "kind": "valid", "reference": "a.pam", "reference16": null, "tolerance": 2, "width": 3, "height": 4,
           "progressive": true, "interlaced": false, "scans": 10, "orientation": 6, "icc_sha256": "ab", "icc_size": 520,
           "gamma": 0.45455, "srgb_intent": 0, "expected_error": null, "lossless": false, "made_with": "cjpeg", "notes": "n",
           "declared_width": 3, "derived_from": null},
          {"file": "b.jpg", "kind": "invalid", "expected_error": "limit"},
          {"file": "c.jpg", "kind": "invalid", "expected_error": "incomplete"}
        ]}
        """
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-manifest-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: directory.appendingPathComponent("manifest.json"))
        let manifest = try FixtureManifest.load(from: directory)
        #expect(manifest.format == "jpeg")
        #expect(manifest.valid.map(\.file) == ["a.jpg"])
        #expect(manifest.invalid.map(\.file) == ["b.jpg", "c.jpg"])
        let a = try #require(manifest["a.jpg"])
        #expect(a.url == directory.appendingPathComponent("a.jpg"))
        #expect(a.referenceURL == directory.appendingPathComponent("a.pam"))
        #expect(a.reference16URL == nil)
        #expect(a.tolerance == 2 && a.width == 3 && a.height == 4 && a.scans == 10 && a.orientation == 6)
        #expect(a.isProgressive == true && a.isInterlaced == false && a.isLossless == false)
        #expect(a.iccSHA256 == "ab" && a.iccSize == 520 && a.gamma == 0.45455 && a.sRGBIntent == 0)
        #expect(a.madeWith == "cjpeg" && a.notes == "n" && a.expectedError == nil)
        #expect(manifest["b.jpg"]?.expectedError?.code == .limitExceeded)
        #expect(manifest["c.jpg"]?.expectedError?.code == .incomplete)
        #expect(Fixture.ExpectedError.corrupt.code == .corrupt)
        #expect("\(a)" == "a.jpg")
    }

    @Test func manifestWithoutRequiredKeysFailsToLoad() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-bad-manifest-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(#"{"format": "png", "fixtures": [{"file": "a.png"}]}"#.utf8).write(to: directory.appendingPathComponent("manifest.json"))
        #expect(throws: DecodingError.self) { try FixtureManifest.load(from: directory) }
        #expect(throws: (any Error).self) { try FixtureManifest.load(from: directory.appendingPathComponent("missing")) }
    }

    @Test func feedingsSplitDataAsDocumented() {
        #expect(ProgressiveFeeding.byteByByte.prefixLengths(count: 4) == [1, 2, 3, 4])
        #expect(ProgressiveFeeding.whole.prefixLengths(count: 9) == [9])
        #expect(ProgressiveFeeding.equalChunks(count: 4).prefixLengths(count: 10) == [2, 5, 7, 10])
        let random = ProgressiveFeeding.randomChunks(seed: 7).prefixLengths(count: 1000)
        #expect(random.last == 1000 && random == random.sorted() && Set(random).count == random.count)
        #expect(random == ProgressiveFeeding.randomChunks(seed: 7).prefixLengths(count: 1000))
        #expect(random != ProgressiveFeeding.randomChunks(seed: 8).prefixLengths(count: 1000))
    }
}
