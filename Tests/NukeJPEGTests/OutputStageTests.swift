import Foundation
import NukeConformance
import NukeCore
import NukeJPEG
import NukeNetpbm
import NukePixels
import Testing

/// The decode's output stage (``ImageDecodingContext/appliesOrientation``), the encoders' metadata
/// (``ImageMetadataPolicy``, ``ExifBlock``) and alpha into JPEG, against references made by Pillow
/// and exiftool (scripts/make-output-fixtures.py).
@Suite struct OutputStageTests {
    static let output = JPEGFixtures.root.appendingPathComponent("Fixtures/output")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: output.appendingPathComponent(name))
    }

    static func decode(_ data: Data, appliesOrientation: Bool, target: ImageSize? = nil) throws -> ImageContainer {
        var context = ImageDecoderRegistry.shared.makeContext(for: data)
        context.appliesOrientation = appliesOrientation
        if let target {
            context.targetSize = target
            context.contentMode = .aspectFit
        }
        return try ImageDecoderRegistry.shared.decode(context)
    }

    static let orientations = Array(1...8).flatMap { n in ["le", "be"].map { (n, $0) } }

    /// Each EXIF orientation, both byte orders: the upright pixels are Pillow's `exif_transpose`
    /// of djpeg's decode, exactly; the image says `.up` and the user info names what was applied.
    @Test(arguments: orientations)
    func appliedOrientationMatchesPillow(_ orientation: Int, _ endian: String) throws {
        let data = try JPEGFixtures.data("exif-orientation-\(orientation)-\(endian).jpg")
        let container = try Self.decode(data, appliesOrientation: true)
        let reference = try Netpbm.decode(try Self.fixture("upright-\(orientation).pam"))
        let comparison = ImageComparison(container.image.bitmap, reference: reference)
        #expect(comparison.isMatch, "\(comparison)")
        #expect(container.image.orientation == .up)
        let applied = container.userInfo[.appliedOrientationKey] as? ImageOrientation
        #expect(applied == (orientation == 1 ? nil : ImageOrientation(rawValue: UInt8(orientation))))

        // Without the option: the stored pixels and the orientation, as Nuke returns them.
        let stored = try Self.decode(data, appliesOrientation: false)
        #expect(stored.image.orientation.rawValue == UInt8(orientation))
        #expect(ImageComparison(stored.image.bitmap, reference: try JPEGFixtures.reference("baseline-420.pam")).isMatch)
    }

    /// The box is for the image as displayed: a 37×23 image stored on its side (6) fits a
    /// 20×10 box as 6×10 upright, where the stored pixels would have fitted as 16×10.
    @Test func theBoxIsForTheDisplayedImage() throws {
        let data = try JPEGFixtures.data("exif-orientation-6-le.jpg")
        let upright = try Self.decode(data, appliesOrientation: true, target: ImageSize(width: 20, height: 10)).image
        #expect(upright.width == 6 && upright.height == 10, "\(upright.width)×\(upright.height)")
        let stored = try Self.decode(data, appliesOrientation: false, target: ImageSize(width: 20, height: 10)).image
        #expect(stored.width == 16 && stored.height == 10, "\(stored.width)×\(stored.height)")
    }

    /// Pillow's own orientation fixtures: each, turned upright, looks like hopper.jpg (they are
    /// separate JPEG encodes: Pillow's `exif_transpose` of them differs from hopper.jpg by 4.65–4.85
    /// levels on average, and so do ours), and the stored pixels of the rotated and flipped ones do not.
    @Test(.enabled(if: corporaExist), arguments: 2...8)
    func pillowHopperOrientations(_ orientation: Int) throws {
        let base = try Self.decode(try JPEGFixtures.corpus("\(JPEGFixtures.pillow)/hopper.jpg"), appliesOrientation: false).image.bitmap
        let data = try JPEGFixtures.corpus("\(JPEGFixtures.pillow)/hopper_orientation_\(orientation).jpg")
        let upright = try Self.decode(data, appliesOrientation: true).image.bitmap
        let stored = try Self.decode(data, appliesOrientation: false).image.bitmap
        #expect(Self.meanDifference(upright, base) < 5, "\(Self.meanDifference(upright, base))")
        #expect(Self.meanDifference(stored, base) > 20, "\(Self.meanDifference(stored, base))")
    }

    static func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        guard a.width == b.width, a.height == b.height else { return .infinity }
        var total = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                for c in 0..<3 { total += abs(a.sample(x: x, y: y, channel: c) - b.sample(x: x, y: y, channel: c)) }
            }
        }
        return Double(total) / Double(a.width * a.height * 3)
    }

    /// exiftool's GPS IFD removed in place: IFD0 no longer points to it, the coordinates' bytes are
    /// gone, the block keeps its length, and the rest (Make, the serial number) stays readable.
    @Test func removingTheLocation() throws {
        let image = try Self.decode(try Self.fixture("location.jpg"), appliesOrientation: false).image
        let exif = try #require(image.exif)
        var block = try #require(ExifBlock(exif))
        #expect(block.hasLocation)
        #expect(block.orientation == .right)
        block.removeLocation()
        #expect(!block.hasLocation)
        #expect(block.data.count == ExifBlock(exif)!.data.count)
        #expect(block.data.range(of: Data("NukeTestCamera".utf8)) != nil)
        #expect(block.data.range(of: Data("SN-0451-7731".utf8)) != nil)
        // GPSLatitudeRef "N\0" and the latitude's first rational (48/1) are zeroed.
        let latitude = Data([0, 0, 0, 48, 0, 0, 0, 1]), littleLatitude = Data([48, 0, 0, 0, 1, 0, 0, 0])
        #expect(exif.range(of: latitude) != nil || exif.range(of: littleLatitude) != nil)
        #expect(block.data.range(of: latitude) == nil && block.data.range(of: littleLatitude) == nil)
        #expect(block.orientation == .right)
        block.setOrientation(.up)
        #expect(block.orientation == .up)
    }

    /// JPEG output of location.jpg under each policy, read back.
    @Test func jpegMetadataPolicies() throws {
        let upright = try Self.decode(try Self.fixture("location.jpg"), appliesOrientation: true).image
        func written(_ policy: ImageMetadataPolicy, _ image: Image = upright) throws -> (Data, Image) {
            let data = try ImageEncoders.JPEG(options: ImageEncodingOptions(quality: 0.9, metadata: policy)).encode(image)
            return (data, try Self.decode(data, appliesOrientation: false).image)
        }
        let (display, displayImage) = try written(.display)
        #expect(displayImage.exif == nil)
        #expect(display.range(of: Data("SN-0451".utf8)) == nil)
        #expect(display.range(of: Data("NukeTestCamera".utf8)) == nil)

        let (kept, keptImage) = try written(.allButLocation)
        let block = try #require(keptImage.exif.flatMap(ExifBlock.init))
        #expect(!block.hasLocation)
        #expect(block.orientation == .up, "the pixels are upright, so EXIF says 1")
        #expect(kept.range(of: Data("SN-0451-7731".utf8)) != nil)

        let (_, allImage) = try written(.all)
        #expect(allImage.exif.flatMap(ExifBlock.init)?.hasLocation == true)

        // Stored pixels under `.display`: the orientation alone is kept, so it still shows upright.
        let stored = try Self.decode(try Self.fixture("location.jpg"), appliesOrientation: false).image
        let (storedData, storedImage) = try written(.display, stored)
        #expect(storedImage.orientation == .right)
        #expect(storedData.range(of: Data("SN-0451".utf8)) == nil)

        let (_, none) = try written(.none, stored)
        #expect(none.exif == nil && none.orientation == .up)
    }

    /// A profile is written only over pixels of its colour space: a CMYK profile never goes
    /// over the RGB pixels a CMYK JPEG decodes to.
    @Test func aCMYKProfileIsNotWrittenOverRGB() throws {
        var header = [UInt8](repeating: 0, count: 132)
        header[3] = 132
        header.replaceSubrange(12..<20, with: Array("prtrCMYK".utf8))
        header.replaceSubrange(36..<40, with: Array("acsp".utf8))
        var image = try Self.decode(try JPEGFixtures.data("baseline-420.jpg"), appliesOrientation: false).image
        image.iccProfile = Data(header)
        let cmyk = try ImageEncoders.JPEG().encode(image)
        #expect(try Self.decode(cmyk, appliesOrientation: false).image.iccProfile == nil)
        header.replaceSubrange(12..<20, with: Array("mntrRGB ".utf8))
        image.iccProfile = Data(header)
        let rgb = try ImageEncoders.JPEG().encode(image)
        #expect(try Self.decode(rgb, appliesOrientation: false).image.iccProfile == Data(header))
    }

    /// Alpha composited onto a background, against Pillow's `alpha_composite`.
    @Test(arguments: [("white", RGBColor.white), ("ff8000", RGBColor(red: 255, green: 128, blue: 0))])
    func flatteningMatchesPillow(_ name: String, _ background: RGBColor) throws {
        let rgba = try Netpbm.decode(try Self.fixture("alpha.pam"))
        let reference = try Netpbm.decode(try Self.fixture("alpha-on-\(name).pam"))
        let flat = rgba.flattened(onto: background)
        let comparison = ImageComparison(flat, reference: reference, tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")

        // Into JPEG: the encoder flattens the same way (quality 1.0, 4:4:4 chroma).
        let options = ImageEncodingOptions(quality: 1, background: background)
        let decoded = try Self.decode(try ImageEncoders.JPEG(options: options).encode(Image(bitmap: rgba)), appliesOrientation: false).image
        let jpeg = ImageComparison(decoded.bitmap, reference: reference, tolerance: .minimumPSNR(38))
        #expect(jpeg.isMatch, "\(jpeg)")
    }
}
