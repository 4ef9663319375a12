extension Bitmap {
    /// A copy of the rows in `range`, in the same pixel format, alpha mode and stride.
    ///
    /// For streaming encoders and writers that convert a batch of rows at a time
    /// (`bitmap.rows(y..<y + 32).converted(to: .rgb8)`) instead of a copy of the whole image.
    /// A range outside `0..<height` traps.
    public func rows(_ range: Range<Int>) -> Bitmap {
        precondition(range.lowerBound >= 0 && range.upperBound <= height, "rows out of bounds")
        return Bitmap(width: width, height: range.count, pixelFormat: pixelFormat, alphaMode: alphaMode, bytesPerRow: bytesPerRow) { out in
            withUnsafeBytes { source in
                out.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[(range.lowerBound * bytesPerRow)..<(range.upperBound * bytesPerRow)]))
            }
        }
    }
}
