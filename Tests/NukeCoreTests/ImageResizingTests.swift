import Foundation
import Testing
import NukeCore
import NukePixels

struct ImageResizingTests {
    /// A long-lived process reads the announced resamplers once per decode to size. Each read must
    /// hand back the same closure: when they were a tuple in the `Mutex`, every read wrapped the
    /// stored closure in two more reabstraction thunks, and after enough decodes one call ran
    /// through so many that the process overflowed its stack (the bmp fuzz target, ~2,000 decodes).
    /// A million reads, then one call of each: without the fix, this test crashes its process.
    @Test func readingTheResamplersDoesNotLengthenThem() throws {
        for _ in 0..<1_000_000 {
            _ = ImageResizing.current
            _ = ImageResizing.currentRowResampler
        }
        let resize = try #require(ImageResizing.current)
        let makeRows = try #require(ImageResizing.currentRowResampler)
        let source = try PixelAllocator.heap.makeBitmap(width: 4, height: 4, pixelFormat: .rgba8)
        let resized = resize(source, ImageSize(width: 2, height: 2), nil)
        #expect((resized.width, resized.height) == (2, 2))
        let rows = makeRows(ImageSize(width: 4, height: 4), .rgba8, .straight, ImageSize(width: 2, height: 2), nil)
        source.withUnsafeBytes { rows.push(rows: $0, count: 4, bytesPerRow: source.bytesPerRow) }
        let streamed = rows.finish()
        #expect((streamed.width, streamed.height) == (2, 2))
    }
}
