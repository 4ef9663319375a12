import Foundation
import NukeCore
import Testing

/// The core chooses among the reductions a codec declares, by the plan of a decode to size.
@Suite struct ImageNativeReductionsTests {
    private func context(_ width: Int, _ height: Int, fast: Bool = false) -> ImageDecodingContext {
        var context = ImageDecodingContext(data: Data(), targetSize: ImageSize(width: width, height: height))
        context.prefersFastScaling = fast
        return context
    }

    /// The smallest N/8 that covers twice the final size (the size rounded up, as libjpeg does);
    /// the final size itself when fast; none when only 8/8 covers it.
    @Test(arguments: [
        (1000, 750, 100, 75, 2, ImageSize(width: 250, height: 188)),
        (1000, 750, 500, 375, nil, nil),
        (1000, 750, 125, 94, 2, ImageSize(width: 250, height: 188)),
        (1000, 750, 126, 95, 3, ImageSize(width: 375, height: 282)),
    ] as [(Int, Int, Int, Int, Int?, ImageSize?)])
    func fractions(_ width: Int, _ height: Int, _ targetWidth: Int, _ targetHeight: Int, _ numerator: Int?, _ size: ImageSize?) {
        let original = ImageSize(width: width, height: height)
        let reduction = context(targetWidth, targetHeight).nativeReduction(of: original, among: .fractions(1...8, of: 8))
        #expect(reduction?.option == numerator)
        #expect(reduction?.size == size)
        #expect(reduction?.scale == numerator.map { Double($0) / 8 })
        if let reduction {
            #expect(reduction.userInfo[.originalSizeKey] as? ImageSize == original)
            #expect(reduction.userInfo[.nativeScaleKey] as? Double == reduction.scale)
        }
        let fast = context(targetWidth, targetHeight, fast: true).nativeReduction(of: original, among: .fractions(1...8, of: 8))
        #expect(fast.map { $0.size.width >= targetWidth - 1 && $0.size.width <= targetWidth + 125 } ?? (width <= 2 * targetWidth))
    }

    /// A scaler divides by whole factors down to twice the final size, from its minimum factor;
    /// when fast it goes to the final size.
    @Test func scaler() {
        let original = ImageSize(width: 4000, height: 3000)
        let reduction = context(256, 192).nativeReduction(of: original, among: .scaler(minimumFactor: 2))
        #expect(reduction?.size == ImageSize(width: 572, height: 429))   // ÷7: 4000 / 256 / 2 = 7.8
        #expect(reduction?.option == nil && reduction?.scale == nil)
        #expect(context(256, 192, fast: true).nativeReduction(of: original, among: .scaler(minimumFactor: 2))?.size == ImageSize(width: 256, height: 192))
        // 4000 / 1200 / 2 = 1.7: below the minimum factor, the image is decoded whole.
        #expect(context(1200, 900).nativeReduction(of: original, among: .scaler(minimumFactor: 2)) == nil)
        #expect(context(400, 300).nativeReduction(of: original, among: .scaler(minimumFactor: 6)) == nil)
    }

    /// The smallest embedded copy of the image's shape that covers the floor.
    @Test func embedded() {
        let original = ImageSize(width: 4000, height: 3000)
        let sizes = [ImageSize(width: 320, height: 240), ImageSize(width: 1024, height: 768), ImageSize(width: 600, height: 600),
                     ImageSize(width: 0, height: 0), ImageSize(width: 640, height: 480)]
        #expect(context(256, 192).nativeReduction(of: original, among: .embedded, embedded: sizes)?.option == 4)   // 640 ≥ 512
        #expect(context(100, 75).nativeReduction(of: original, among: .embedded, embedded: sizes)?.option == 0)
        #expect(context(300, 300).nativeReduction(of: original, among: .embedded, embedded: sizes)?.option == 1)   // fill: 400 × 300 → 800 × 600
        #expect(context(1000, 750).nativeReduction(of: original, among: .embedded, embedded: sizes) == nil)
        #expect(context(256, 192).nativeReduction(of: original, among: .embedded) == nil)
        // No target size, no reduction.
        #expect(ImageDecodingContext(data: Data()).nativeReduction(of: original, among: .embedded, embedded: sizes) == nil)
    }
}
