import CSVGShim
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
        #expect(bytes == expected)
        if bytes != expected, let first = zip(bytes, expected).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
            Issue.record("first difference at byte \(first.offset): \(first.element.0) instead of \(first.element.1)")
        }
    }
}
