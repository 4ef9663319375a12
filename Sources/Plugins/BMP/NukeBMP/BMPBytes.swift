/// Little-endian reads at byte offsets the caller has checked against the buffer's count.
extension UnsafeRawBufferPointer {
    @inline(__always)
    func le16(_ offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8
    }

    @inline(__always)
    func le32(_ offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16 | UInt32(self[offset + 3]) << 24
    }
}

/// `a + b`, `a × b` with `nil` on overflow: every size and offset read from a file goes through them.
@inline(__always)
func checkedAdd(_ a: Int, _ b: Int) -> Int? {
    let (sum, overflow) = a.addingReportingOverflow(b)
    return overflow ? nil : sum
}

@inline(__always)
func checkedMultiply(_ a: Int, _ b: Int) -> Int? {
    let (product, overflow) = a.multipliedReportingOverflow(by: b)
    return overflow ? nil : product
}
