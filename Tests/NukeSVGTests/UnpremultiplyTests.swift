import CSVGShimTesting
import Testing

/// cairo's premultiplied ARGB to straight RGBA, for every alpha and every premultiplied value
/// (c ≤ a), by the AVX2 path and by the table, against the integer formula cairo's PNG writer uses.
@Suite struct UnpremultiplyTests {
    @Test(arguments: [true, false])
    func everyAlphaAndChannelValue(simd: Bool) {
        var words: [UInt32] = []
        var expected: [UInt8] = []
        for a in 0..<256 {
            for c in 0...a {
                let (g, b) = ((c * 7) % (a + 1), (c * 13 + 5) % (a + 1))
                words.append(UInt32(a) << 24 | UInt32(c) << 16 | UInt32(g) << 8 | UInt32(b))
                for value in [c, g, b] { expected.append(a == 0 ? 0 : UInt8((value * 255 + a / 2) / a)) }
                expected.append(UInt8(a))
            }
        }
        var bytes = words.withUnsafeBytes { [UInt8]($0) }
        bytes.withUnsafeMutableBufferPointer { nukesvg_unpremultiply($0.baseAddress!, words.count, simd ? 1 : 0) }
        // The first difference only: printing a megabyte of bytes helps nobody.
        let first = zip(bytes, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(bytes.count == expected.count)
        #expect(first == nil, "byte \(first?.offset ?? 0): \(first?.element.0 ?? 0) instead of \(first?.element.1 ?? 0)")
    }

    /// The AVX2 path against the table on words of every kind, in blocks of eight as the vector
    /// loop reads them: all opaque, all transparent, mixed, and channels above their alpha (not
    /// valid premultiplied values, clamped to 255), with a tail shorter than a block.
    @Test func simdAgreesWithTheTableOnAnyWord() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random() -> UInt32 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt32(truncatingIfNeeded: state >> 32)
        }
        var words: [UInt32] = []
        for block in 0..<40_000 {
            for _ in 0..<8 {
                let word = random()
                switch block % 4 {
                case 0: words.append(word | 0xFF00_0000)         // opaque
                case 1: words.append(word & 0x00FF_FFFF)         // transparent, colour bits set
                case 2: words.append(block % 8 == 2 ? word : word & 0x0FFF_FFFF)  // any, or low alpha
                default: words.append(random() % 3 == 0 ? 0xFF00_0000 | word : word)  // mixed
                }
            }
        }
        words += [0x8040_2010, 0x0000_0000, 0xFF12_3456]
        var simd = words.withUnsafeBytes { [UInt8]($0) }
        var table = simd
        simd.withUnsafeMutableBufferPointer { nukesvg_unpremultiply($0.baseAddress!, words.count, 1) }
        table.withUnsafeMutableBufferPointer { nukesvg_unpremultiply($0.baseAddress!, words.count, 0) }
        let first = zip(simd, table).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(first == nil, "word \((first?.offset ?? 0) / 4) (0x\(String(words[(first?.offset ?? 0) / 4], radix: 16))): \(first?.element.0 ?? 0) instead of \(first?.element.1 ?? 0)")
    }
}
