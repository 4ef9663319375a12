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
}
