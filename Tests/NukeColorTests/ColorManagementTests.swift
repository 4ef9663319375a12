import Foundation
import NukeColor
import NukeConformance
import NukeCore
import NukeHEIF
import NukeJPEG
import NukeNetpbm
import NukePixels
import Testing

/// NukeColor against lcms2's own `transicc` applied to independent decodes
/// (scripts/make-color-fixtures.py): Display P3 and Adobe RGB JPEGs, a CMYK JPEG without a profile
/// through Ghostscript's default_cmyk.icc, an AVIF described by nclx only.
@Suite struct ColorManagementTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func fixture(_ path: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent("Fixtures/\(path)"))
    }

    static func decode(_ data: Data, to target: ImageColorTarget?) throws -> ImageContainer {
        var context = ImageDecoderRegistry.shared.makeContext(for: data)
        context.colorConversion = target
        return try ImageDecoderRegistry.shared.decode(context)
    }

    static func reference(_ name: String) throws -> Bitmap {
        try Netpbm.decode(try fixture("color/\(name)"))
    }

    @Test func theManagerIsLinked() {
        #expect(ImageColorManagement.current is LittleCMSColorManager)
    }

    /// Embedded RGB profiles to sRGB, within a level of transicc's float transform of djpeg's pixels.
    @Test(arguments: ["p3", "adobe-rgb"])
    func embeddedProfilesToSRGB(_ name: String) throws {
        let container = try Self.decode(try Self.fixture("color/\(name).jpg"), to: .sRGB)
        let comparison = ImageComparison(container.image.bitmap, reference: try Self.reference("\(name)-srgb.pam"), tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")
        #expect(container.image.iccProfile == nil, "sRGB pixels carry no profile")
        let note = try #require(container.userInfo[.colorConversionKey] as? String)
        #expect(note.hasSuffix("→ sRGB"), "\(note)")

        // The same file left alone keeps its profile and its pixels.
        let kept = try Self.decode(try Self.fixture("color/\(name).jpg"), to: nil)
        #expect(kept.image.iccProfile != nil)
        #expect(ImageComparison(kept.image.bitmap, reference: try Netpbm.decode(try Self.fixture("jpeg/baseline-420.pam"))).isMatch)
    }

    /// To a profile the caller gives: Display P3 pixels converted to Display P3 come back as they
    /// are stored, and carry that profile.
    @Test func toTheCallersProfile() throws {
        let p3 = try Self.fixture("color/display-p3.icc")
        let container = try Self.decode(try Self.fixture("color/p3.jpg"), to: .profile(p3))
        let stored = try Netpbm.decode(try Self.fixture("jpeg/baseline-420.pam"))
        let comparison = ImageComparison(container.image.bitmap, reference: stored, tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")
        #expect(container.image.iccProfile == p3)
    }

    static let ghostscriptCMYK = FileManager.default.fileExists(atPath: LittleCMSColorManager.ghostscriptCMYKProfilePath)

    /// A CMYK JPEG without a profile, through Ghostscript's default_cmyk.icc as the rows decode.
    /// lcms2's lookup table (the high-resolution one; jpgicc uses the coarser default) is within
    /// 2 levels of transicc's exact transform for almost every sample; out-of-gamut, ink-heavy
    /// colours differ more.
    @Test(.enabled(if: ghostscriptCMYK))
    func cmykWithoutAProfile() throws {
        let container = try Self.decode(try Self.fixture("jpeg/cmyk-adobe.jpg"), to: .sRGB)
        let reference = try Self.reference("cmyk-adobe-srgb.pam")
        let bitmap = container.image.bitmap
        var close = 0, total = 0, sum = 0
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width {
                for c in 0..<3 {
                    let d = abs(bitmap.sample(x: x, y: y, channel: c) - reference.sample(x: x, y: y, channel: c))
                    close += d <= 2 ? 1 : 0
                    sum += d
                    total += 1
                }
            }
        }
        #expect(Double(close) / Double(total) >= 0.98, "\(close) of \(total) samples within 2 levels")
        #expect(Double(sum) / Double(total) < 0.5)
        let note = try #require(container.userInfo[.colorConversionKey] as? String)
        #expect(note.contains("default_cmyk.icc"), "\(note)")
        #expect(container.image.iccProfile == nil)

        // Without the request, the naive conversion, as djpeg makes it.
        let naive = try Self.decode(try Self.fixture("jpeg/cmyk-adobe.jpg"), to: nil)
        #expect(ImageComparison(naive.image.bitmap, reference: try Netpbm.decode(try Self.fixture("jpeg/cmyk-adobe.pam"))).isMatch)
    }

    /// Where no CMYK profile is available, there is no converter: the JPEG decoder keeps its
    /// naive conversion.
    @Test func noStandardCMYKProfile() throws {
        let manager = LittleCMSColorManager(defaultCMYKProfilePath: nil)
        #expect(try manager.cmykConverter(profile: nil, inverted: true, to: .sRGB) == nil)
        let missing = LittleCMSColorManager(defaultCMYKProfilePath: "/nonexistent/default_cmyk.icc")
        #expect(try missing.cmykConverter(profile: nil, inverted: true, to: .sRGB) == nil)
    }

    /// An AVIF described by nclx alone (Display P3 primaries, sRGB transfer), within a level of
    /// transicc's conversion of heif-convert's pixels.
    @Test func nclxDisplayP3() throws {
        let container = try Self.decode(try Self.fixture("color/nclx-p3.avif"), to: .sRGB)
        let comparison = ImageComparison(container.image.bitmap, reference: try Self.reference("nclx-p3-srgb.pam"), tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")
        #expect(container.userInfo[.nclxKey] == nil)
        #expect((container.userInfo[.colorConversionKey] as? String)?.contains("Display P3") == true)
    }

    /// HDR transfers are reported, not mangled: the pixels stay as decoded.
    @Test(arguments: [(16, "PQ"), (18, "HLG")])
    func hdrTransfersAreLeftAlone(_ transfer: Int, _ name: String) throws {
        let bitmap = Bitmap(width: 2, height: 1, pixelFormat: .rgb8, bytes: [10, 20, 30, 200, 100, 50])
        var container = ImageContainer(image: Image(bitmap: bitmap), type: .avif, userInfo: [.nclxKey: [9, transfer, 9, 1]])
        try LittleCMSColorManager().convert(&container, to: .sRGB)
        #expect(container.image.bitmap == bitmap)
        let note = try #require(container.userInfo[.colorConversionKey] as? String)
        #expect(note.hasPrefix("not converted") && note.contains(name), "\(note)")
    }

    /// A profile for other channels than the pixels' (a CMYK profile over RGB) is not applied.
    @Test(.enabled(if: ghostscriptCMYK))
    func aProfileForOtherChannelsIsNotApplied() throws {
        let cmyk = try Data(contentsOf: URL(fileURLWithPath: LittleCMSColorManager.ghostscriptCMYKProfilePath))
        let bitmap = Bitmap(width: 1, height: 1, pixelFormat: .rgb8, bytes: [1, 2, 3])
        var image = Image(bitmap: bitmap)
        image.iccProfile = cmyk
        var container = ImageContainer(image: image, type: .jpeg)
        try LittleCMSColorManager().convert(&container, to: .sRGB)
        #expect(container.image.bitmap == bitmap)
        let note = container.userInfo[.colorConversionKey] as? String
        #expect(note?.hasPrefix("not converted") == true && note?.contains("CMYK") == true, "\(String(describing: note))")
    }

    /// A profile lcms2 cannot read is a clear error naming NukeColor and lcms2's reason.
    @Test func anUnreadableProfileIsAnError() throws {
        var image = Image(bitmap: Bitmap(width: 1, height: 1, pixelFormat: .rgb8, bytes: [1, 2, 3]))
        image.iccProfile = Data(repeating: 7, count: 200)
        var container = ImageContainer(image: image, type: .jpeg)
        let error = #expect(throws: ImageCodecError.self) { try LittleCMSColorManager().convert(&container, to: .sRGB) }
        #expect(error?.code == .unsupported)
        #expect(error?.codec?.contains("NukeColor (lcms2 2.") == true, "\(String(describing: error))")
        #expect(error?.message.contains("ICC profile") == true, "\(String(describing: error))")
    }
}
