import Foundation
import Testing
import NukeCore
import NukePixels

/// The core's row destination: the rows a decoder produces in order become the image at the size
/// decoded, or stream into the resampler for a decode to size.
struct ImageRowDestinationTests {
    /// A 6 × 4 RGB gradient, row by row.
    static let source = Bitmap(width: 6, height: 4, pixelFormat: .rgb8, bytes: (0..<72).map { UInt8($0 * 3 % 256) })

    func push(_ bitmap: Bitmap, rows: Int? = nil, into destination: ImageRowDestination) {
        bitmap.withUnsafeBytes { bytes in
            for y in 0..<(rows ?? bitmap.height) {
                destination.push(row: UnsafeRawBufferPointer(rebasing: bytes[(y * bitmap.bytesPerRow)..<((y + 1) * bitmap.bytesPerRow)]))
            }
        }
    }

    @Test func keepsTheImageWithoutATargetSize() throws {
        let destination = try ImageRowDestination(size: ImageSize(width: 6, height: 4), pixelFormat: .rgb8, alphaMode: .none,
                                                  context: ImageDecodingContext(data: Data()))
        #expect(!destination.isResampling && destination.buffer?.count == 72)
        push(Self.source, into: destination)
        let (bitmap, userInfo) = destination.finish()
        #expect(bitmap == Self.source)
        #expect(userInfo.isEmpty)
    }

    /// The rows not pushed are blank, not whatever the memory held.
    @Test func rowsNeverPushedAreZero() throws {
        let destination = try ImageRowDestination(size: ImageSize(width: 6, height: 4), pixelFormat: .rgb8, alphaMode: .none,
                                                  context: ImageDecodingContext(data: Data()))
        push(Self.source, rows: 1, into: destination)
        let bitmap = destination.finish().bitmap
        bitmap.withUnsafeBytes { bytes in
            #expect(bytes[18...].allSatisfy { $0 == 0 })
        }
    }

    /// For a decode to size the rows stream into the announced resampler: the result is what
    /// the plan's finish makes of the whole image, and the stored size is reported.
    @Test func streamsIntoTheResamplerForADecodeToSize() throws {
        let context = ImageDecodingContext(data: Data(), targetSize: ImageSize(width: 3, height: 2), contentMode: .aspectFit)
        let destination = try ImageRowDestination(size: ImageSize(width: 6, height: 4), pixelFormat: .rgb8, alphaMode: .none, context: context)
        #expect(destination.isResampling && destination.buffer == nil)
        push(Self.source, into: destination)
        let (bitmap, userInfo) = destination.finish()
        let plan = try #require(context.scalePlan(for: ImageSize(width: 6, height: 4)))
        #expect(bitmap == plan.finish(Self.source))
        #expect(bitmap.width == 3 && bitmap.height == 2)
        #expect(userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: 6, height: 4))
    }

    /// A codec's own reduction (half the stored size here) is resampled the rest of the way.
    @Test func finishesACodecsReduction() throws {
        let context = ImageDecodingContext(data: Data(), targetSize: ImageSize(width: 3, height: 2), contentMode: .aspectFit)
        let destination = try ImageRowDestination(size: ImageSize(width: 6, height: 4), pixelFormat: .rgb8, alphaMode: .none, context: context,
                                                  originalSize: ImageSize(width: 12, height: 8))
        #expect(destination.isResampling)
        push(Self.source, into: destination)
        let (bitmap, userInfo) = destination.finish()
        #expect(bitmap.width == 3 && bitmap.height == 2)
        #expect(userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: 12, height: 8))
    }
}
