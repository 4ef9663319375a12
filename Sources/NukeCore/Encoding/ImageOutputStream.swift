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

/// An ``ImageOutputStream`` that can also write again over bytes it wrote before, as a file or a
/// `Data` can. An encoder that learns some header fields only at the end (an animated WebP's RIFF
/// size) can then hand over the rest of the file as it goes, rather than hold it all until the
/// end (``AnimatedImageEncoding/encode(_:to:)``).
public protocol SeekableImageOutputStream: ImageOutputStream {
    /// Where the next write goes: the number of bytes in the stream, counted from its start.
    var position: Int { get }

    /// Writes `bytes` over bytes written before, from `offset` (counted as ``position`` is); they
    /// must end at or before ``position``.
    ///
    /// - Throws: Whatever stops the stream; the encoder stops and rethrows it.
    mutating func overwrite(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws
}
