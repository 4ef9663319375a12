#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import NukeCore

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

/// What an incremental decoder that keeps its input has been told: the bytes pushed, whether the
/// input is finished, and whether previews are wanted (``InputKeepingDecoder``).
public struct IncrementalInput: Sendable {
    /// Every byte pushed so far.
    public private(set) var pushed = PushedBytes()
    /// `true` after `finish()`: no more bytes will come.
    public private(set) var isFinished = false
    /// Whether the caller wants previews (`setWantsPreviews(_:)`); default `true`.
    public var wantsPreviews = true

    /// Nothing pushed yet.
    public init() {}

    /// Every byte pushed so far, from index 0.
    public var bytes: Data { pushed.data }

    /// Appends bytes not seen before.
    public mutating func push(_ bytes: Data) {
        precondition(!isFinished, "push after finish")
        pushed.append(bytes)
    }

    /// Declares that no more bytes will come.
    public mutating func finish() {
        isFinished = true
    }
}

/// An incremental decoder (a class) that keeps what it is fed in an ``IncrementalInput``: it gets
/// `push(_:)`, `finish()` and `setWantsPreviews(_:)` from here and writes only `next()`.
public protocol InputKeepingDecoder: AnyObject, IncrementalImageDecoding {
    /// What the decoder has been fed.
    var input: IncrementalInput { get set }
}

extension InputKeepingDecoder {
    /// Appends bytes not seen before to ``input``.
    public func push(_ bytes: Data) { input.push(bytes) }
    /// Marks ``input`` finished.
    public func finish() { input.finish() }
    /// Turns previews off (or on again).
    public func setWantsPreviews(_ wantsPreviews: Bool) { input.wantsPreviews = wantsPreviews }
}

extension Data {
    /// Calls `body` with the bytes in place, keeping its typed error (`withUnsafeBytes` rethrows
    /// only untyped ones).
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(ImageCodecError) -> R) throws(ImageCodecError) -> R {
        let result = withUnsafeBytes { raw in Result { () throws(ImageCodecError) in try body(raw) } }
        return try result.get()
    }
}

extension Optional where Wrapped == Data {
    /// Calls `body` with the bytes, or with an empty buffer at no address when there are none
    /// (`nil` or empty): what a C parameter pair of pointer and count takes for "absent".
    public func withOptionalBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard let self, !self.isEmpty else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try self.withUnsafeBytes(body)
    }
}
