/// Takes a decoded image's rows as the decoder produces them, top to bottom, so that the
/// full-size image never has to exist in memory.
///
/// ``ImageDecoderRegistry/decode(_:reading:rowsTo:)`` hands the final image to a sink: `nuke
/// convert X.jpg out.pam` writes each batch of rows to the file and reuses the memory. A decoder
/// that produces rows in order takes the sink itself (``IncrementalImageDecoding/setRowSink(_:)``);
/// for the others the registry decodes the bitmap and hands its rows over from storage. Either
/// way the sink sees ``begin(width:height:pixelFormat:alphaMode:)`` once, then every row once.
///
/// ```swift
/// final class RowCounter: ImageRowSink {
///     var rows = 0
///     func begin(width: Int, height: Int, pixelFormat: PixelFormat, alphaMode: AlphaMode) {}
///     func write(rows: UnsafeRawBufferPointer, count: Int, bytesPerRow: Int) { self.rows += count }
/// }
/// ```
///
/// A sink is used by one decode on one thread at a time.
public protocol ImageRowSink: AnyObject {
    /// Called once, before the first row, with the size and layout of the rows to come.
    ///
    /// - Throws: An error that ends the decode (it reaches the registry's caller).
    func begin(width: Int, height: Int, pixelFormat: PixelFormat, alphaMode: AlphaMode) throws(ImageCodecError)

    /// Takes the next `count` rows, `bytesPerRow` apart in `rows` (valid during the call only).
    ///
    /// - Throws: An error that ends the decode (it reaches the registry's caller).
    func write(rows: UnsafeRawBufferPointer, count: Int, bytesPerRow: Int) throws(ImageCodecError)
}

extension ImageRowSink {
    /// Hands every row of `bitmap` over from its storage: what the registry does for decoders
    /// that do not take a sink.
    public func write(_ bitmap: Bitmap) throws(ImageCodecError) {
        try begin(width: bitmap.width, height: bitmap.height, pixelFormat: bitmap.pixelFormat, alphaMode: bitmap.alphaMode)
        guard bitmap.width > 0, bitmap.height > 0 else { return }
        try bitmap.withUnsafeBytes { (bytes) throws(ImageCodecError) in
            try write(rows: bytes, count: bitmap.height, bytesPerRow: bitmap.bytesPerRow)
        }
    }
}
