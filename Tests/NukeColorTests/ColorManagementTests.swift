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

    /// A CMYK JPEG without a profile, through Ghostscript's default_cmyk.icc as its rows decode;
    /// one with a profile of its own (ps_cmyk.icc), through that. A small image takes lcms2's
    /// exact pipeline: transicc's result within a level.
    @Test(arguments: [("jpeg/cmyk-adobe.jpg", "cmyk-adobe-srgb.pam", "default_cmyk.icc"), ("color/cmyk-ps.jpg", "cmyk-ps-srgb.pam", "")])
    func cmyk(_ file: String, _ reference: String, _ named: String) throws {
        // Without libgs-common there is no default CMYK profile; the tagged file needs none.
        if !named.isEmpty, !Self.ghostscriptCMYK { return }
        let container = try Self.decode(try Self.fixture(file), to: .sRGB)
        let comparison = ImageComparison(container.image.bitmap, reference: try Self.reference(reference), tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")
        let note = try #require(container.userInfo[.colorConversionKey] as? String)
        #expect(named.isEmpty ? !note.contains("default_cmyk.icc") : note.contains(named), "\(note)")
        #expect(container.image.iccProfile == nil)

        // Without the request, the same: a bitmap cannot carry CMYK, so the registry asks for sRGB
        // whenever a colour manager is linked.
        let unasked = try Self.decode(try Self.fixture(file), to: nil)
        #expect(unasked.image.bitmap == container.image.bitmap)
        // Asked to keep the codec's own colour: the naive conversion, as djpeg makes it.
        var context = ImageDecoderRegistry.shared.makeContext(for: try Self.fixture(file))
        context.managesUncarriedColor = false
        let naive = try ImageDecoderRegistry.shared.decode(context)
        #expect(ImageComparison(naive.image.bitmap, reference: try Netpbm.decode(try Self.fixture("jpeg/cmyk-adobe.pam"))).isMatch)
    }

    /// A large CMYK image takes lcms2's high-resolution lookup table instead (made once, about
    /// 90 ms): close to the exact pipeline, not equal.
    @Test(.enabled(if: ghostscriptCMYK))
    func largeCMYKUsesTheTable() throws {
        let manager = LittleCMSColorManager()
        let exact = try #require(try manager.cmykConverter(profile: nil, inverted: true, to: .sRGB, pixelCount: 1))
        let table = try #require(try manager.cmykConverter(profile: nil, inverted: true, to: .sRGB, pixelCount: 10_000_000))
        // Every 8th level of each ink: 32⁴ colours.
        var cmyk = [UInt8](), exactRGB = [UInt8](repeating: 0, count: 3 << 20), tableRGB = exactRGB
        for c in stride(from: 0, through: 255, by: 8) { for m in stride(from: 0, through: 255, by: 8) {
            for y in stride(from: 0, through: 255, by: 8) { for k in stride(from: 0, through: 255, by: 8) {
                cmyk += [UInt8(c), UInt8(m), UInt8(y), UInt8(k)]
            } }
        } }
        let count = UInt32(cmyk.count / 4)
        cmyk.withUnsafeBufferPointer { input in
            exactRGB.withUnsafeMutableBufferPointer { exact.function(exact.context, input.baseAddress, $0.baseAddress, count) }
            tableRGB.withUnsafeMutableBufferPointer { table.function(table.context, input.baseAddress, $0.baseAddress, count) }
        }
        let differences = zip(exactRGB.prefix(Int(count) * 3), tableRGB.prefix(Int(count) * 3)).map { abs(Int($0) - Int($1)) }
        let within2 = Double(differences.filter { $0 <= 2 }.count) / Double(differences.count)
        #expect(within2 >= 0.95, "\(within2) of samples within 2 levels")
        #expect(differences.contains { $0 > 0 }, "the table is not the exact pipeline")
    }

    /// Where no CMYK profile is available, there is no converter: the JPEG decoder keeps its
    /// naive conversion.
    @Test func noStandardCMYKProfile() throws {
        let manager = LittleCMSColorManager(defaultCMYKProfilePath: nil)
        #expect(try manager.cmykConverter(profile: nil, inverted: true, to: .sRGB, pixelCount: 1) == nil)
        let missing = LittleCMSColorManager(defaultCMYKProfilePath: "/nonexistent/default_cmyk.icc")
        #expect(try missing.cmykConverter(profile: nil, inverted: true, to: .sRGB, pixelCount: 1) == nil)
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
