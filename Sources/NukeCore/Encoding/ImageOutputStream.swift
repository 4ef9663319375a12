/// Where an encoder writes the bytes of the file it produces, in order, as it produces them.
///
/// Encoders that stream (``ImageEncoding/encode(_:to:)``) hand over the file in pieces — a
/// header, then a batch of compressed rows at a time — so the whole file never has to exist
/// in memory. `FileOutputStream` writes to a file descriptor, ``DataOutputStream`` collects
/// the bytes in a `Data`.
public protocol ImageOutputStream {
    /// Writes `bytes`, all of them, after those written before.
    ///
    /// `bytes` is valid only during the call: copy what you keep.
    /// - Throws: Whatever stops the stream (a full disk, a closed pipe); the encoder stops and
    ///   rethrows it.
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws
}
