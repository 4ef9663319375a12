import NukeCore
import NukeProcessing
import Testing

@Suite struct FlattenTests {
    /// Pillow's paste with the alpha as mask rounds `(c·a + b·(255 − a)) / 255` the same way up
    /// to its fixed-point arithmetic: at most one level apart.
    @Test func flattenMatchesPillowsPasteOntoWhite() throws {
        let source = try ProcessingFixtures.bitmap("source-rgba.pam")
        let flat = try ImageProcessors.Flatten(color: .white).process(source)
        #expect(flat.pixelFormat == .rgb8)
        let difference = try #require(ProcessingFixtures.maxDifference(flat, try ProcessingFixtures.bitmap("flatten-white.pam")))
        #expect(difference <= 1)
    }

    @Test func anImageWithoutAlphaIsUnchanged() throws {
        let source = try ProcessingFixtures.bitmap("source-rgb.pam")
        #expect(try ImageProcessors.Flatten(color: .black).process(source) == source)
    }
}
