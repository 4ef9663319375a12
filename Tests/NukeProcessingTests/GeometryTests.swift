import NukeCore
import NukeProcessing
import Testing

/// Rotations, flips and crops move pixels without changing them: equal to Pillow's, sample for sample.
@Suite struct GeometryTests {
    @Test(arguments: [(90, "rotate-90.pam"), (180, "rotate-180.pam"), (270, "rotate-270.pam"), (-90, "rotate-270.pam")])
    func rotationEqualsPillowsTranspose(degrees: Int, reference: String) throws {
        let source = try ProcessingFixtures.bitmap("source-rgba.pam")
        let rotated = try ImageProcessors.Rotate(degrees: degrees).process(source)
        #expect(rotated == (try ProcessingFixtures.bitmap(reference)))
    }

    @Test(arguments: [(ImageProcessors.Flip.Direction.horizontal, "flip-h.pam"), (.vertical, "flip-v.pam")])
    func flipEqualsPillowsMirrorAndFlip(direction: ImageProcessors.Flip.Direction, reference: String) throws {
        let source = try ProcessingFixtures.bitmap("source-rgba.pam")
        #expect(try ImageProcessors.Flip(direction).process(source) == (try ProcessingFixtures.bitmap(reference)))
    }

    @Test func rectangleCropEqualsPillowsCrop() throws {
        let source = try ProcessingFixtures.bitmap("source-rgb.pam")
        let cropped = try ImageProcessors.Crop(rect: ImageRect(x: 10, y: 5, width: 40, height: 30)).process(source)
        #expect(cropped == (try ProcessingFixtures.bitmap("crop-40x30+10+5.pam")))
    }

    @Test func aRectangleOutsideTheImageThrows() throws {
        let source = try ProcessingFixtures.bitmap("source-rgb.pam")
        #expect(throws: ImageCodecError.self) {
            try ImageProcessors.Crop(rect: ImageRect(x: 100, y: 0, width: 40, height: 30)).process(source)
        }
        do {
            _ = try ImageProcessors.Crop(rect: ImageRect(x: 0, y: 60, width: 10, height: 30)).process(source)
            Issue.record("a crop below the image was accepted")
        } catch let error as ImageCodecError {
            #expect(error.stage == .processing)
            #expect(error.code == .unsupported)
        }
    }

    @Test func gravityPlacesTheCrop() throws {
        let source = try ProcessingFixtures.bitmap("source-rgb.pam")  // 120 × 80
        let size = ImageSize(width: 40, height: 40)
        let expected: [(ImageProcessors.Crop.Gravity, ImageRect)] = [
            (.center, ImageRect(x: 40, y: 20, width: 40, height: 40)),
            (.top, ImageRect(x: 40, y: 0, width: 40, height: 40)),
            (.bottom, ImageRect(x: 40, y: 40, width: 40, height: 40)),
            (.left, ImageRect(x: 0, y: 20, width: 40, height: 40)),
            (.right, ImageRect(x: 80, y: 20, width: 40, height: 40)),
        ]
        for (gravity, rect) in expected {
            let cropped = try ImageProcessors.Crop(size: size, gravity: gravity).process(source)
            #expect(cropped == (try ImageProcessors.Crop(rect: rect).process(source)), "\(gravity)")
        }
        // A crop larger than the image keeps the image's side.
        let tall = try ImageProcessors.Crop(size: ImageSize(width: 10, height: 500)).process(source)
        #expect(tall.width == 10 && tall.height == 80)
    }

    @Test func entropyCropFindsTheDetailedPart() throws {
        // A flat grey image with a noisy 20 × 20 patch near its bottom-right corner.
        var state: UInt32 = 12345
        let bitmap = Bitmap(width: 100, height: 60, pixelFormat: .gray8) { out in
            for y in 0..<60 {
                for x in 0..<100 {
                    state = state &* 1_103_515_245 &+ 12345
                    out[y * 100 + x] = (70..<90).contains(x) && (30..<50).contains(y) ? UInt8(truncatingIfNeeded: state >> 16) : 128
                }
            }
        }
        let crop = ImageProcessors.Crop(size: ImageSize(width: 30, height: 30), gravity: .entropy)
        let cropped = try crop.process(bitmap)
        #expect(cropped.width == 30 && cropped.height == 30)
        // Every noisy pixel is inside: a flat crop would have only 128s.
        var noisy = 0
        for y in 0..<30 { for x in 0..<30 where cropped.sample(x: x, y: y, channel: 0) != 128 { noisy += 1 } }
        #expect(noisy >= 380, "the crop holds \(noisy) of the patch's 400 noisy pixels")
    }
}
