import Foundation

extension Data {
    /// Hands out these bytes in pieces of `size` (the last one shorter, then `nil`), as
    /// `ImageDecoderRegistry.decode(_:reading:)` reads a file: a test's stand-in for reading from
    /// disk or a socket.
    ///
    /// ```swift
    /// let image = try registry.decode(ImageDecodingContext(data: data.prefix(16)), reading: data.dropFirst(16).pieces(ofSize: 4096))
    /// ```
    public func pieces(ofSize size: Int) -> () -> Data? {
        precondition(size > 0, "pieces of at least one byte")
        var offset = startIndex
        let data = self
        return {
            guard offset < data.endIndex else { return nil }
            let end = Swift.min(offset + size, data.endIndex)
            defer { offset = end }
            return data.subdata(in: offset..<end)
        }
    }
}
