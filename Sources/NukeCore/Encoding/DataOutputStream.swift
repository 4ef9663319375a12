#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An ``ImageOutputStream`` that collects everything written in ``data``.
public struct DataOutputStream: ImageOutputStream, Sendable {
    /// The bytes written so far.
    public var data: Data

    /// Creates a stream that appends to `data` (empty by default).
    public init(data: Data = Data()) {
        self.data = data
    }

    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        data.append(contentsOf: bytes)
    }

    /// The bytes `write` puts into a new stream: an encoder's `encode(_:) -> Data` made of its
    /// streaming `encode(_:to:)`.
    public static func collecting(_ write: (inout DataOutputStream) throws -> Void) rethrows -> Data {
        var stream = DataOutputStream()
        try write(&stream)
        return stream.data
    }
}

extension DataOutputStream: SeekableImageOutputStream {
    public var position: Int { data.count }

    public mutating func overwrite(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        precondition(offset >= 0 && bytes.count <= data.count - offset, "overwrite past the end of the stream")
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        data.withUnsafeMutableBytes { target in
            (target.baseAddress! + offset).copyMemory(from: source, byteCount: bytes.count)
        }
    }
}

