import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import Testing
@testable import NukePNG

/// ``ImageDecoders/PNG`` against the fixtures' reference decodes, the PngSuite and hostile files.
@Suite struct ImageDecodersPNGTests {
    // MARK: - Fixtures

    @Test(.enabled(if: pngFixturesExist), arguments: PNGConformance.manifest.valid)
    func decodesFixtureLikeReference(_ fixture: Fixture) throws {
        let container = try PNGTestDecoding.decode(try PNGTestPaths.fixture(fixture.file))
        let reference = try Netpbm.decode(try PNGTestPaths.fixture(try #require(fixture.reference)))
        let bitmap = container.image.bitmap
        #expect(bitmap.pixelFormat == reference.pixelFormat)
        #expect(bitmap.width == fixture.width && bitmap.height == fixture.height)
        #expect(bitmap.pngTestMaxDifference(from: reference) <= (fixture.tolerance ?? 0))
        #expect(container.isPreview == false)
        #expect(container.type == .png)
        #expect(container.userInfo[.isProgressiveKey] as? Bool == fixture.isInterlaced)

        let image = container.image
        #expect(image.orientation.rawValue == UInt8(fixture.orientation ?? 1))
        #expect(image.colorInfo.gamma.map { ($0 * 100_000).rounded() } == fixture.gamma.map { ($0 * 100_000).rounded() })
        #expect(image.colorInfo.sRGBIntent == fixture.sRGBIntent)
        #expect(image.colorInfo.iccProfile?.count == fixture.iccSize)
        if let digest = fixture.iccSHA256, let profile = image.colorInfo.iccProfile {
            #expect(FixtureDigest.sha256Hex(profile) == digest)
        }
        if fixture.orientation.map({ $0 != 1 }) ?? false {
            #expect(image.exif != nil)
        }
    }

    @Test(.enabled(if: pngFixturesExist), arguments: PNGConformance.manifest.valid.filter { $0.reference16 != nil })
    func keepsSixteenBitsWhenPreferred(_ fixture: Fixture) throws {
        let container = try PNGTestDecoding.decode(try PNGTestPaths.fixture(fixture.file), highBitDepth: true)
        let reference = try Netpbm.decode(try PNGTestPaths.fixture(try #require(fixture.reference16)))
        #expect(container.image.bitmap.pixelFormat.bitsPerChannel == 16)
        #expect(container.image.bitmap.pixelFormat == reference.pixelFormat)
        #expect(container.image.bitmap.pngTestMaxDifference(from: reference) == 0)
    }

    @Test(.enabled(if: pngFixturesExist), arguments: PNGConformance.manifest.valid.filter { $0.reference16 == nil })
    func eightBitFilesStayEightBitWhenSixteenArePreferred(_ fixture: Fixture) throws {
        let data = try PNGTestPaths.fixture(fixture.file)
        #expect(try PNGTestDecoding.decode(data, highBitDepth: true).image == PNGTestDecoding.decode(data).image)
    }

    @Test(.enabled(if: pngFixturesExist), arguments: PNGConformance.manifest.invalid)
    func rejectsInvalidFixture(_ fixture: Fixture) throws {
        let data = try PNGTestPaths.fixture(fixture.file)
        let expected: ImageCodecError.Code
        switch fixture.expectedError {
        case .incomplete: expected = .incomplete
        case .limit: expected = .limitExceeded
        default: expected = .corrupt
        }
        let error = try #require(throws: ImageCodecError.self) { try PNGTestDecoding.decode(data) }
        #expect(error.code == expected, "\(error)")
        #expect(error.format == .png)
        #expect(error.codec == PNGLibrary.codecName)
        #expect(!error.message.isEmpty)
    }

    @Test(.enabled(if: pngFixturesExist))
    func keepsLibpngsMessage() throws {
        let error = try #require(throws: ImageCodecError.self) {
            try PNGTestDecoding.decode(try PNGTestPaths.fixture("bad-crc-ihdr.png"))
        }
        #expect(error.message.contains("CRC"), "\(error)")
    }

    // MARK: - Limits

    @Test(.enabled(if: pngFixturesExist))
    func hugeDeclaredSizeFailsBeforeAllocating() throws {
        let data = try PNGTestPaths.fixture("huge-dimensions.png")
        let clock = ContinuousClock()
        let start = clock.now
        let error = try #require(throws: ImageCodecError.self) { try PNGTestDecoding.decode(data) }
        #expect(error.code == .limitExceeded)
        #expect(error.stage == .header)
        #expect(clock.now - start < .seconds(1))
    }

    @Test func smallLimitsRejectANormalFile() throws {
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 64, height: 48, format: .rgb8)))
        var limits = ImageLimits.default
        limits.maxDimension = 32
        #expect(PNGTestDecoding.errorCode { _ = try PNGTestDecoding.decode(data, limits: limits) } == .limitExceeded)
        limits = .default
        limits.maxPixelCount = 64 * 48 - 1
        #expect(PNGTestDecoding.errorCode { _ = try PNGTestDecoding.decode(data, limits: limits) } == .limitExceeded)
        limits = .default
        limits.maxDecodedBytes = 64 * 48 * 3 - 1
        #expect(PNGTestDecoding.errorCode { _ = try PNGTestDecoding.decode(data, limits: limits) } == .limitExceeded)
        limits.maxDecodedBytes = 64 * 48 * 3
        #expect(try PNGTestDecoding.decode(data, limits: limits).image.width == 64)
    }

    @Test func cancellationStopsTheDecode() throws {
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 64, height: 48, format: .rgb8)))
        let cancellation = ImageDecodingCancellation()
        cancellation.cancel()
        let decoder = ImageDecoders.PNG(cancellation: cancellation)
        #expect(PNGTestDecoding.errorCode { _ = try decoder.decode(data) } == .cancelled)
    }

    // MARK: - Edge cases of the input

    @Test func emptyAndSignatureOnlyDataAreIncomplete() {
        #expect(PNGTestDecoding.errorCode { _ = try PNGTestDecoding.decode(Data()) } == .incomplete)
        let signature = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(PNGTestDecoding.errorCode { _ = try PNGTestDecoding.decode(signature) } == .incomplete)
        #expect(PNGTestDecoding.errorCode { _ = try PNGTestDecoding.decode(Data("GIF89a not a png at all".utf8)) } == .corrupt)
    }

    @Test func ignoresDataAfterIEND() throws {
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 20, height: 10, format: .rgba8)))
        let padded = data + Data(repeating: 0xAB, count: 100_000)
        #expect(try PNGTestDecoding.decode(padded).image == PNGTestDecoding.decode(data).image)
    }

    @Test func missingIENDIsIncompleteEvenWithAllRows() throws {
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 20, height: 10, format: .rgb8)))
        #expect(PNGTestDecoding.errorCode { _ = try PNGTestDecoding.decode(data.dropLast(12)) } == .incomplete)
    }

    @Test func acceptsADataSlice() throws {
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 20, height: 10, format: .rgb8)))
        let slice = (Data([1, 2, 3]) + data)[3...]
        #expect(slice.startIndex == 3)
        #expect(try PNGTestDecoding.decode(slice).image == PNGTestDecoding.decode(data).image)
    }

    @Test func registeringInitializersCheckTheSignature() throws {
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 4, height: 4, format: .rgb8)))
        #expect(ImageDecoders.PNG(data: data, context: ImageDecodingContext(data: data)) != nil)
        let gif = Data("GIF89a....".utf8)
        #expect(ImageDecoders.PNG(data: gif, context: ImageDecodingContext(data: gif)) == nil)
        let partial = data.prefix(8)
        #expect(ImageDecoders.PNG(partiallyDownloadedData: partial, context: ImageDecodingContext(data: partial, isCompleted: false)) != nil)
        let short = data.prefix(5)
        #expect(ImageDecoders.PNG(partiallyDownloadedData: short, context: ImageDecodingContext(data: short, isCompleted: false)) == nil)
    }

    // MARK: - Concurrency

    @Test func decodesConcurrently() async throws {
        let inputs = try [PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba16].map { format in
            try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: format == .rgb8))
                .encode(Image(bitmap: PNGTestImages.gradient(width: 97, height: 61, format: format)))
        }
        let expected = try inputs.map { try PNGTestDecoding.decode($0, highBitDepth: true).image }
        let shared = ImageDecoders.PNG(prefersHighBitDepth: true)
        try await withThrowingTaskGroup(of: (Int, Image).self) { group in
            for round in 0..<64 {
                let index = round % inputs.count
                let input = inputs[index]
                group.addTask {
                    // Fresh decoders in parallel, plus one instance shared by every task (its
                    // calls are serialised by its lock; each complete decode stands alone).
                    let image = round % 2 == 0
                        ? try ImageDecoders.PNG(prefersHighBitDepth: true).decode(input).image
                        : try shared.decode(input).image
                    return (index, image)
                }
            }
            for try await (index, image) in group {
                #expect(image == expected[index])
            }
        }
    }
}
