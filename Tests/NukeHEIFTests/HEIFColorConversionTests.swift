import CHEIFShim
import CHEIFShimTesting
import Foundation
import NukeConformance
import NukeCore
import NukeHEIF
import Testing

/// NukeHEIF's decoder plugin converts decoded 8-bit YCbCr to RGB itself (CHEIFShim/ycbcr.c),
/// with libheif 1.15's arithmetic, vectorised: its output must be libheif's to the bit.
@Suite struct HEIFColorConversionTests {
    /// Every matrix the conversion takes on, in both ranges, with and without half-width chroma:
    /// the vector loop equals the one-pixel-at-a-time reference on random rows of every width up
    /// to 70 (the vector loop's tails) and on the extremes 0 and 255.
    @Test(arguments: [-1, 1, 2, 4, 5, 6, 7, 9, 10, 14])
    func vectorLoopEqualsTheReference(_ profileMatrix: Int) {
        // -1: no nclx profile at all.
        let (hasProfile, matrixCoefficients) = (profileMatrix >= 0, UInt16(max(profileMatrix, 0)))
        var generator = SystemRandomNumberGenerator()
        for fullRange in [Int32(1), 0] {
            var matrix = nukeheif_ycbcr_matrix()
            #expect(nukeheif_ycbcr_matrix_make(hasProfile ? 1 : 0, matrixCoefficients, fullRange, &matrix) == 1)
            for shift in [Int32(0), 1] {
                for width in 1...70 {
                    for round in 0..<20 {
                        let chromaWidth = shift == 1 ? (width + 1) / 2 : width
                        func row(_ count: Int) -> [UInt8] {
                            switch round {
                            case 0: [UInt8](repeating: 0, count: count)
                            case 1: [UInt8](repeating: 255, count: count)
                            default: (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
                            }
                        }
                        let (y, cb, cr) = (row(width), row(chromaWidth), round == 2 ? row(chromaWidth).map { 255 - $0 } : row(chromaWidth))
                        var (r, g, b) = ([UInt8](repeating: 0, count: width), [UInt8](repeating: 0, count: width), [UInt8](repeating: 0, count: width))
                        var (rr, rg, rb) = (r, g, b)
                        nukeheif_ycbcr_to_rgb_row(y, cb, cr, shift, Int32(width), &matrix, &r, &g, &b)
                        nukeheif_ycbcr_to_rgb_row_reference(y, cb, cr, shift, 0, Int32(width), &matrix, &rr, &rg, &rb)
                        let same = r == rr && g == rg && b == rb
                        #expect(same, "matrix \(matrixCoefficients), full range \(fullRange), shift \(shift), width \(width)")
                        if !same { return }
                    }
                }
            }
        }
    }

    /// The matrices libheif converts another way are left to it.
    @Test(arguments: [0, 8, 12, 13])
    func otherMatricesAreLeftToLibheif(_ matrixCoefficients: Int) {
        var matrix = nukeheif_ycbcr_matrix()
        #expect(nukeheif_ycbcr_matrix_make(1, UInt16(matrixCoefficients), 1, &matrix) == 0)
    }

    /// libheif's coefficients for BT.601 with no profile, and for BT.709 (computed in floats as
    /// libheif computes them).
    @Test func coefficientsAreLibheifs() {
        var matrix = nukeheif_ycbcr_matrix()
        _ = nukeheif_ycbcr_matrix_make(0, 0, 0, &matrix)
        #expect(matrix.r_cr == 1.402 && matrix.g_cb == -0.344136 && matrix.g_cr == -0.714136 && matrix.b_cb == 1.772 && matrix.full_range == 1)
        _ = nukeheif_ycbcr_matrix_make(1, 1, 0, &matrix)
        let (kr, kb): (Float, Float) = (0.2126, 0.0722)
        #expect(matrix.r_cr == 2 * (1 - kr) && matrix.b_cb == 2 * (1 - kb) && matrix.full_range == 0)
        #expect(abs(matrix.g_cb - -0.187324) < 1e-5 && abs(matrix.g_cr - -0.468124) < 1e-5)
    }

    /// The 8-bit fixtures whose primary image is one coded image (every colour description,
    /// chroma layout and range among them, alpha too) are converted by the plugin, exactly once
    /// (not their alpha), and equal heif-convert's decode exactly. The rest are left to libheif:
    /// 10-bit samples, the lossless file's GBR matrix (0), and grids (heif-enc writes an image
    /// under 64 pixels on a side as a one-tile grid), whose tiles libheif decodes on its threads.
    @Test(arguments: [("photo.avif", 1), ("alpha.avif", 1), ("bt709-limited.heic", 1), ("bt709-limited.avif", 1),
                      ("chroma422.heic", 1), ("chroma444.avif", 1), ("photo.heic", 0), ("alpha.heic", 0),
                      ("lossless.heic", 0), ("ten-bit.heic", 0)])
    func codedImagesAreConvertedByThePlugin(_ name: String, conversions: Int) throws {
        let data = try HEIFTestPaths.fixture(name)
        // A synchronous test runs on one thread, and libheif decodes a coded image on its caller's.
        let before = nukeheif_converted_image_count()
        let decoded = try ImageDecoderRegistry.shared.decode(ImageDecodingContext(data: data)).image.bitmap
        #expect(nukeheif_converted_image_count() - before == conversions, "\(name)")
        if name != "ten-bit.heic" {
            let reference = try HEIFTestPaths.reference(name.replacingOccurrences(of: ".", with: "-") + ".pam")
            let comparison = ImageComparison(decoded, reference: reference, tolerance: .exact)
            #expect(comparison.isMatch, "\(name): \(comparison)")
        }
    }
}
