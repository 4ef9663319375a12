#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The bytes an incremental decoder has been given (`IncrementalImageDecoding.push(_:)`),
/// indexed from 0: the first push shares the caller's storage (a whole file pushed once is never
/// copied), later pushes append.
public struct PushedBytes: Sendable {
    /// Every byte pushed so far, from index 0.
    public private(set) var data = Data()

    /// No bytes yet.
    public init() {}

    /// Appends bytes that follow the ones pushed before.
    public mutating func append(_ bytes: Data) {
        if data.isEmpty {
            data = bytes.startIndex == 0 ? bytes : Data(bytes)
        } else {
            data.append(bytes)
        }
    }
}
