public import CNukeShim
public import NukeCore

/// The one owner of a shim's row encoder (libjpeg's compressor, libpng's writer): rows go in a
/// batch at a time, the output is taken between calls and written to an `ImageOutputStream`,
/// so no Swift code runs while the library's jump buffer is armed.
///
/// A plugin names its shim's functions once, in an initialiser of a constrained extension, and adds
/// its own `start`:
///
/// ```swift
/// typealias JPEGCompressor = ShimRowEncoder<JPEGLibrary>
///
/// extension ShimRowEncoder where Library == JPEGLibrary {
///     convenience init() throws(ImageCodecError) {
///         try self.init(nukejpeg_encoder_create(), what: "the libjpeg compressor", destroy: { nukejpeg_encoder_destroy($0) }, ...)
///     }
/// }
/// ```
public final class ShimRowEncoder<Library: CodecLibrary>: RowCompressing {
    /// The shim's encoder, for the plugin's own calls (`check(nukejpeg_encoder_start(pointer, ...))`).
    public let pointer: OpaquePointer
    private let destroy: (OpaquePointer) -> Void
    private let write: (OpaquePointer, UnsafePointer<UInt8>, Int, UInt32) -> nuke_status
    private let end: (OpaquePointer) -> nuke_status
    private let take: (OpaquePointer, UnsafeMutablePointer<UnsafePointer<UInt8>?>, UnsafeMutablePointer<Int>) -> Void
    private let diagnostics: (OpaquePointer) -> UnsafePointer<nuke_diagnostics>

    /// Takes ownership of the encoder `create` returned, with the shim's functions.
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` `.encodingFailed` when `encoder` is `nil` (out of
    ///   memory), naming `what` the shim could not create.
    public init(
        _ encoder: OpaquePointer?, what: String,
        destroy: @escaping (OpaquePointer) -> Void,
        writeRows: @escaping (OpaquePointer, UnsafePointer<UInt8>, Int, UInt32) -> nuke_status,
        finish: @escaping (OpaquePointer) -> nuke_status,
        takeOutput: @escaping (OpaquePointer, UnsafeMutablePointer<UnsafePointer<UInt8>?>, UnsafeMutablePointer<Int>) -> Void,
        diagnostics: @escaping (OpaquePointer) -> UnsafePointer<nuke_diagnostics>
    ) throws(ImageCodecError) {
        guard let encoder else { throw Library.encodingError("out of memory: cannot create \(what)") }
        (pointer, self.destroy, write, end, take, self.diagnostics) = (encoder, destroy, writeRows, finish, takeOutput, diagnostics)
    }

    deinit {
        destroy(pointer)
    }

    public func writeRows(_ rows: UnsafeRawPointer, stride: Int, count: Int) throws(ImageCodecError) {
        try check(write(pointer, rows.assumingMemoryBound(to: UInt8.self), stride, UInt32(count)))
    }

    public func finish() throws(ImageCodecError) {
        try check(end(pointer))
    }

    public func takeOutput() -> UnsafeRawBufferPointer {
        var bytes: UnsafePointer<UInt8>?
        var count = 0
        take(pointer, &bytes, &count)
        return UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : count)
    }

    /// Throws the library's error, with its own message, unless `status` is OK.
    public func check(_ status: nuke_status) throws(ImageCodecError) {
        guard status != NUKE_STATUS_OK else { return }
        throw Library.encodingError(status: status, diagnostics: diagnostics(pointer).pointee)
    }
}
