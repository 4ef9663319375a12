public import NukeCore

/// A C library's encoder that takes rows and keeps the bytes they produce until asked (NukeJPEG's
/// and NukePNG's shims): ``compress(_:batchRows:passes:to:convert:)`` writes a bitmap's rows into
/// it a batch at a time and each batch's bytes to the stream before the next, so memory holds one
/// batch of output, not the file.
public protocol RowCompressing: AnyObject {
    /// Compresses `count` rows, `stride` bytes apart, from `rows`.
    func writeRows(_ rows: UnsafeRawPointer, stride: Int, count: Int) throws(ImageCodecError)
    /// Ends the file; its last bytes are then taken.
    func finish() throws(ImageCodecError)
    /// The bytes produced since the last call, valid until the next call into the encoder.
    func takeOutput() -> UnsafeRawBufferPointer
}

extension RowCompressing {
    /// Writes the bytes produced since the last call to `stream`.
    public func drain(to stream: inout some ImageOutputStream) throws {
        let output = takeOutput()
        if output.count > 0 { try stream.write(output) }
    }

    /// Writes what the encoder has produced so far, then every row of `source` (`passes` times
    /// over, for an interlaced file), `batchRows` at a time, each batch's bytes to `stream` before
    /// the next; then finishes the file.
    ///
    /// - Parameters:
    ///   - source: The image's pixels.
    ///   - batchRows: How many rows go to the encoder between two drains.
    ///   - passes: How many times every row is written (7 for Adam7).
    ///   - stream: Where the file's bytes go.
    ///   - convert: The batch's rows in the layout the encoder takes, or `nil` when the source's
    ///     rows go in place.
    public func compress(_ source: Bitmap, batchRows: Int, passes: Int = 1, to stream: inout some ImageOutputStream,
                         convert: (Range<Int>) -> Bitmap?) throws {
        try drain(to: &stream)
        for _ in 0..<passes {
            var y = 0
            while y < source.height {
                let count = min(batchRows, source.height - y)
                let converted = convert(y..<(y + count))
                let bitmap = converted ?? source
                let first = converted == nil ? y : 0
                try bitmap.withUnsafeBytes { (pixels) throws(ImageCodecError) in
                    // The bitmap is at least one row, so its bytes have an address.
                    guard let base = pixels.baseAddress else { return }
                    try writeRows(base + first * bitmap.bytesPerRow, stride: bitmap.bytesPerRow, count: count)
                }
                try drain(to: &stream)
                y += count
            }
        }
        try finish()
        try drain(to: &stream)
    }
}
