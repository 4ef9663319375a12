import Foundation
import NukeConformance
import NukeCore
import NukeJPEG
import NukeNetpbm
import NukePNG
import NukeWebP
import Testing

/// What `nuke convert` writes for a thumbnail, as a user runs it: upright, without the uploader's
/// location or camera serial, alpha composited into JPEG (scripts/make-output-fixtures.py).
@Suite struct ConvertOutputTests {
    static let location = "Fixtures/output/location.jpg"

    static func convert(_ input: String, _ ext: String, _ arguments: String...) throws -> (Data, Image) {
        try convert(input, ext, arguments)
    }

    /// The default thumbnail, to JPEG, PNG and WebP: upright (37×23 stored on its side shows as
    /// 23×37), no EXIF beyond what displays it, none of the uploader's data anywhere in the file.
    @Test(arguments: ["jpg", "png", "webp"])
    func thumbnailsAreUprightAndPrivate(_ ext: String) throws {
        let (data, image) = try Self.convert(Self.location, ext, "--max-size", "64")
        #expect(image.width == 23 && image.height == 37, "\(image.width)×\(image.height)")
        #expect(image.orientation == .up)
        #expect(image.exif == nil)
        for secret in ["SN-0451-7731", "NukeTestCamera", "GPS", "48.85"] {
            #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) in the \(ext) thumbnail")
        }
        if ext == "png" {
            let reference = try Netpbm.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/output/upright-6.pam")))
            #expect(ImageComparison(image.bitmap, reference: reference).isMatch)
        }
    }

    /// Issues 42 and 59: a CMYK JPEG converted to PNG with no `--color` goes through its profile to
    /// sRGB (lcms2's transicc within a level, Fixtures/color), not through the naive formula (a mean
    /// error of 16 levels), also when its frame header lies past the first 128 KiB piece (a large
    /// profile before it: the header check used to see no header there, and so no CMYK);
    /// `--color keep` still asks for the stored colour.
    @Test func cmykIsColourManagedWhenTheOutputCannotHoldIt() throws {
        let reference = try Netpbm.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/color/cmyk-ps-srgb.pam")))
        let (_, managed) = try Self.convert("Fixtures/color/cmyk-ps.jpg", "png")
        let comparison = ImageComparison(managed.bitmap, reference: reference, tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")
        let (_, naive) = try Self.convert("Fixtures/color/cmyk-ps.jpg", "png", "--color", "keep")
        #expect(!ImageComparison(naive.bitmap, reference: reference, tolerance: .maxDifference(1)).isMatch)

        // The same file with 200 KB of APP15 segments after SOI: the header is past 128 KiB.
        let original = try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/color/cmyk-ps.jpg"))
        var padded = Data(original.prefix(2))
        for _ in 0..<4 { padded += Data([0xFF, 0xEF, 0xC3, 0x50]) + Data(repeating: 0x20, count: 50_000 - 2) }
        padded += original.dropFirst(2)
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("cmyk-padded.jpg")
        try padded.write(to: input)
        let (_, far) = try Self.convert(input.path, "png")
        let farComparison = ImageComparison(far.bitmap, reference: reference, tolerance: .maxDifference(1))
        #expect(farComparison.isMatch, "\(farComparison)")
    }

    /// `--page` picks a page of a multi-page TIFF (from 1); a page past the last is an error.
    @Test func pagesOfATIFF() throws {
        let (_, second) = try Self.convert("Fixtures/tiff/pages-3.tif", "png", "--page", "2")
        #expect(second.width == 20 && second.height == 11)
        let reference = try Netpbm.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/tiff/pages-3.page1.pam")))
        #expect(ImageComparison(second.bitmap, reference: reference).isMatch)
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let past = try NukeBinary.run(["convert", "Fixtures/tiff/pages-3.tif", directory.appendingPathComponent("out.png").path, "--page", "4"])
        #expect(past.status != 0)
        #expect(past.stderr.contains("the file has 3"), "\(past.stderr)")
    }

    /// Issue 42: per-format options reach `nuke convert` generically, as the codecs declare them:
    /// `--option page=2` is NukeTIFF's page (as `--page 2`), `--option dpi=192` NukeSVG's
    /// resolution (a document 48 × 38 at 96 DPI is 96 × 76 at 192). A name no linked
    /// codec declares, or a value its codec refuses, is a usage error naming the declared ones.
    @Test func declaredDecodeOptions() throws {
        let (_, second) = try Self.convert("Fixtures/tiff/pages-3.tif", "png", "--option", "page=2")
        let reference = try Netpbm.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/tiff/pages-3.page1.pam")))
        #expect(ImageComparison(second.bitmap, reference: reference).isMatch)
        // In this process and in a sandboxed helper (SVG's default): the option crosses the wire.
        for place in ["--in-process", "--isolate"] {
            let (_, at192) = try Self.convert("Fixtures/svg/physical-units.svg", "png", "--option", "dpi=192", place)
            #expect(at192.width == 96 && at192.height == 76, "\(place): \(at192.width)×\(at192.height)")
        }
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.png").path
        let unknown = try NukeBinary.run(["convert", "Fixtures/tiff/pages-3.tif", output, "--option", "quality=3"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("page") && unknown.stderr.contains("dpi"), "\(unknown.stderr)")
        let refused = try NukeBinary.run(["convert", "Fixtures/svg/physical-units.svg", output, "--option", "dpi=-1"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("positive number"), "\(refused.stderr)")
    }

    /// `--metadata all --strip-location` keeps the camera data but not the GPS IFD, with
    /// Orientation 1 over upright pixels; `--orientation keep` keeps the stored pixels and 6.
    @Test func keepingMetadataWithoutTheLocation() throws {
        let (data, image) = try Self.convert(Self.location, "jpg", "--max-size", "64", "--metadata", "all", "--strip-location")
        let block = try #require(image.exif.flatMap(ExifBlock.init))
        #expect(!block.hasLocation)
        #expect(block.orientation == .up)
        #expect(data.range(of: Data("SN-0451-7731".utf8)) != nil)

        let (_, stored) = try Self.convert(Self.location, "webp", "--orientation", "keep", "--metadata", "all")
        #expect(stored.width == 37 && stored.height == 23)
        #expect(stored.orientation == .right)
        #expect(stored.exif.flatMap(ExifBlock.init)?.hasLocation == true)
    }

    /// HEIC → JPEG keeping all metadata: libheif turned the pixels by irot, and the EXIF
    /// Orientation 6 beside it is not written back, so the JPEG is not turned a second time.
    @Test func heicWithIrotIsTurnedOnce() throws {
        let (_, image) = try Self.convert("Fixtures/output/irot-6.heic", "jpg", "--metadata", "all")
        #expect(image.width == 23 && image.height == 37, "\(image.width)×\(image.height)")
        #expect(image.orientation == .up)
        #expect(image.exif.flatMap(ExifBlock.init)?.orientation == .up)
    }

    /// A Display P3 photograph's thumbnail is in sRGB, without a profile: within a level of
    /// lcms2's transicc (scripts/make-color-fixtures.py). `--color keep` keeps the P3 profile.
    @Test func thumbnailsAreSRGB() throws {
        let (_, image) = try Self.convert("Fixtures/color/p3.jpg", "png", "--max-size", "64")
        let reference = try Netpbm.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/color/p3-srgb.pam")))
        let comparison = ImageComparison(image.bitmap, reference: reference, tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")
        #expect(image.iccProfile == nil)
        let (_, kept) = try Self.convert("Fixtures/color/p3.jpg", "png", "--max-size", "64", "--color", "keep")
        #expect(kept.iccProfile == (try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/color/display-p3.icc"))))
    }

    /// Alpha into JPEG is composited onto white, or onto `--background`.
    @Test func alphaIntoJPEGIsFlattened() throws {
        for (name, flag) in [("white", [String]()), ("ff8000", ["--background", "#ff8000"])] {
            let (_, image) = try Self.convert("Fixtures/output/alpha.pam", "jpg", ["--quality", "100"] + flag)
            let reference = try Netpbm.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/output/alpha-on-\(name).pam")))
            let comparison = ImageComparison(image.bitmap, reference: reference, tolerance: .minimumPSNR(38))
            #expect(comparison.isMatch, "\(name): \(comparison)")
        }
    }
}

extension ConvertOutputTests {
    static func convert(_ input: String, _ ext: String, _ arguments: [String]) throws -> (Data, Image) {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.\(ext)")
        let run = try NukeBinary.run(["convert", input, out.path] + arguments)
        #expect(run.status == 0, "\(run.stderr)")
        let data = try Data(contentsOf: out)
        return (data, try ImageDecoderRegistry.shared.decode(data).image)
    }
}
