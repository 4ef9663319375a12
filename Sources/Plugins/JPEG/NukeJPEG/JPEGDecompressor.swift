#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit
internal import CJPEGShim

/// The one owner of a libjpeg decompressor (a `nukejpeg_decoder` of the C shim).
///
/// Every method calls one shim function, which sets libjpeg's jump buffer, and turns its status
/// into `true` (done), `false` (suspended: needs more input) or a thrown ``ImageCodecError``
/// carrying libjpeg's own message. Not thread-safe: a decoder keeps it inside a `Mutex`.
final class JPEGDecompressor {
    private let handle: OpaquePointer

    /// What the C decoder reports after the header.
    struct Header {
        var width: Int
        var height: Int
        var components: Int
        var colorSpace: Int32
        var isProgressive: Bool
        var hasMultipleScans: Bool
        var isArithmetic: Bool
        var coefficientBytes: Int
    }

    /// Events of ``consume()``.
    enum Event {
        case suspended
        case reachedScan
        case reachedEnd
    }

    /// The memory libjpeg may allocate itself (`max_memory_to_use`) — chiefly the coefficient
    /// buffer of a multi-scan file, about 2 bytes per sample plus MCU padding: 4 × the
    /// maximum decoded bytes plus 1 MiB for its tables and row buffers.
    static func memoryBudget(for limits: ImageLimits) -> Int {
        let (scaled, overflow) = max(limits.maxDecodedBytes, 0).multipliedReportingOverflow(by: 4)
        return overflow ? .max : scaled.addingReportingOverflow(1 << 20).overflow ? .max : scaled + (1 << 20)
    }

    /// Creates a decompressor bounded by `limits`: libjpeg's own allocations by
    /// ``memoryBudget(for:)`` (`max_memory_to_use`), scans by `maxScanCount`.
    init(limits: ImageLimits) throws(ImageCodecError) {
        let memory = UInt64(clamping: JPEGDecompressor.memoryBudget(for: limits))
        let scans = UInt64(clamping: max(limits.maxScanCount, 0))
        guard let handle = nukejpeg_decoder_create(memory, scans) else {
            throw JPEGLibrary.error(.internalFailure, .header, "cannot create a libjpeg decompressor (out of memory)")
        }
        self.handle = handle
    }

    deinit {
        nukejpeg_decoder_destroy(handle)
    }

    // MARK: Input

    /// Reads straight from `bytes`, which are all of the data. The caller clears the source
    /// with ``clearMemorySource()`` before `bytes` goes out of scope.
    func setMemorySource(_ bytes: UnsafeRawBufferPointer) {
        nukejpeg_decoder_set_memory_source(handle, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    func clearMemorySource() {
        nukejpeg_decoder_clear_memory_source(handle)
    }

    /// Copies `bytes` to the end of the decompressor's input buffer.
    func append(_ bytes: UnsafeRawBufferPointer) throws(ImageCodecError) {
        let status = nukejpeg_decoder_append(handle, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        _ = try check(status, stage: .decoding)
    }

    /// No more input will come: running out of bytes is now an incomplete-data error.
    func setEndOfInput() {
        nukejpeg_decoder_set_end_of_input(handle)
    }

    /// Shows libjpeg only whole scans (for arithmetic coding, which cannot suspend).
    func setGated(_ gated: Bool) {
        nukejpeg_decoder_set_gated(handle, gated ? 1 : 0)
    }

    // MARK: Decoding

    /// Reads the header; `nil` when the input ran out first.
    ///
    /// The corresponding libjpeg function is `jpeg_read_header`.
    func readHeader() throws(ImageCodecError) -> Header? {
        var header = nukejpeg_header()
        guard try check(nukejpeg_decoder_read_header(handle, &header), stage: .header) else { return nil }
        return Header(
            width: Int(header.width), height: Int(header.height), components: Int(header.components),
            colorSpace: header.color_space, isProgressive: header.is_progressive != 0,
            hasMultipleScans: header.has_multiple_scans != 0, isArithmetic: header.is_arithmetic != 0,
            coefficientBytes: Int(clamping: header.coefficient_bytes)
        )
    }

    /// The output size at `scale`/8.
    ///
    /// The corresponding libjpeg function is `jpeg_calc_output_dimensions`.
    func outputSize(scale: Int) throws(ImageCodecError) -> ImageSize {
        var width: UInt32 = 0
        var height: UInt32 = 0
        _ = try check(nukejpeg_decoder_output_size(handle, Int32(scale), &width, &height), stage: .header)
        return ImageSize(width: Int(width), height: Int(height))
    }

    /// Starts decompression with djpeg's defaults at `scale`/8; `false` when suspended.
    ///
    /// The corresponding libjpeg function is `jpeg_start_decompress`.
    func start(scale: Int, buffered: Bool) throws(ImageCodecError) -> Bool {
        try check(nukejpeg_decoder_start(handle, Int32(scale), buffered ? 1 : 0), stage: .decoding)
    }

    /// Runs `body` with libjpeg's progress monitor asking `context`'s cancellation (once per row
    /// group, inside `jpeg_start_decompress` too, which reads every scan of a multi-scan file).
    func withCancellation<R, E: Error>(of context: ImageDecodingContext, _ body: () throws(E) -> R) throws(E) -> R {
        try context.withShimCancellation { (cancellation) throws(E) -> R in
            nukejpeg_decoder_set_cancellation(handle, cancellation)
            defer { nukejpeg_decoder_set_cancellation(handle, nil) }
            return try body()
        }
    }

    /// Converts a CMYK or YCCK file's rows with `converter` (Adobe-inverted samples in).
    func setCMYKConverter(_ converter: CMYKRowConverter) {
        nukejpeg_decoder_set_cmyk_converter(handle, converter.function, converter.context)
    }

    /// Block smoothing of coefficients not yet known (djpeg's default: on); off before ``start(scale:buffered:)``.
    func setBlockSmoothing(_ on: Bool) {
        nukejpeg_decoder_set_block_smoothing(handle, on ? 1 : 0)
    }

    /// The inverse DCT size libjpeg chose for a component at the last scale asked for (1 reads
    /// only the DC coefficient); `nil` when no component has that id.
    func dctSize(ofComponent id: UInt8) -> Int? {
        let size = Int(nukejpeg_decoder_component_dct_size(handle, Int32(id)))
        return size > 0 ? size : nil
    }

    var outputWidth: Int { Int(nukejpeg_decoder_output_width(handle)) }
    var outputHeight: Int { Int(nukejpeg_decoder_output_height(handle)) }
    var outputScanline: Int { Int(nukejpeg_decoder_output_scanline(handle)) }
    var inputScanNumber: Int { Int(nukejpeg_decoder_input_scan_number(handle)) }
    /// What libjpeg tolerated (corrupt-data warnings), or `nil` when it warned about nothing.
    var warnings: ImageDecodingWarnings? { nukejpeg_decoder_diagnostics(handle).pointee.warnings }

    /// Reads up to `maxRows` rows into `buffer` (row `y` at `(y - firstRow) × stride`: the whole
    /// image, or a band of rows from `firstRow` on); `false` when suspended.
    ///
    /// The corresponding libjpeg function is `jpeg_read_scanlines`.
    func readRows(into buffer: UnsafeMutableRawBufferPointer, stride: Int, firstRow: Int = 0, maxRows: Int) throws(ImageCodecError) -> Bool {
        let rows = (outputScanline - firstRow) + min(maxRows, outputHeight - outputScanline)
        precondition(firstRow <= outputScanline && buffer.count >= stride * rows, "row buffer too small")
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return true }
        return try check(nukejpeg_decoder_read_rows(handle, base, stride, UInt32(firstRow), UInt32(clamping: maxRows)), stage: .decoding)
    }

    /// Consumes input until a new scan starts, the end of the image, or the input runs out.
    ///
    /// The corresponding libjpeg function is `jpeg_consume_input`.
    func consume() throws(ImageCodecError) -> Event {
        var event: Int32 = 0
        _ = try check(nukejpeg_decoder_consume(handle, &event), stage: .decoding)
        switch Int(event) {
        case NUKEJPEG_EVENT_REACHED_SOS: return .reachedScan
        case NUKEJPEG_EVENT_REACHED_EOI: return .reachedEnd
        default: return .suspended
        }
    }

    /// The corresponding libjpeg function is `jpeg_start_output`.
    func startOutput(scan: Int) throws(ImageCodecError) -> Bool {
        try check(nukejpeg_decoder_start_output(handle, Int32(scan)), stage: .decoding)
    }

    /// The corresponding libjpeg function is `jpeg_finish_output`.
    func finishOutput() throws(ImageCodecError) -> Bool {
        try check(nukejpeg_decoder_finish_output(handle), stage: .decoding)
    }

    /// The corresponding libjpeg function is `jpeg_finish_decompress`.
    func finish() throws(ImageCodecError) -> Bool {
        try check(nukejpeg_decoder_finish(handle), stage: .decoding)
    }

    // MARK: Metadata

    /// The EXIF block (TIFF header onwards) of the first `Exif` APP1 marker.
    func exif() -> Data? {
        var bytes: UnsafePointer<UInt8>?
        var count = 0
        guard nukejpeg_decoder_exif(handle, &bytes, &count) != 0, let bytes else { return nil }
        return Data(bytes: bytes, count: count)
    }

    /// The ICC profile reassembled from the APP2 markers.
    ///
    /// The corresponding libjpeg function is `jpeg_read_icc_profile`.
    func iccProfile() throws(ImageCodecError) -> Data? {
        var bytes: UnsafeMutablePointer<UInt8>?
        var count = 0
        _ = try check(nukejpeg_decoder_icc_profile(handle, &bytes, &count), stage: .header)
        guard let bytes else { return nil }
        defer { nukejpeg_buffer_free(bytes) }
        return Data(bytes: bytes, count: count)
    }

    // MARK: Errors

    /// `true` for OK, `false` for need-more (suspended); throws for every failing status.
    private func check(_ status: nuke_status, stage: ImageCodecError.Stage) throws(ImageCodecError) -> Bool {
        switch status {
        case NUKE_STATUS_OK: return true
        case NUKE_STATUS_NEED_MORE: return false
        default: throw error(status: status, stage: stage)
        }
    }

    private func error(status: nuke_status, stage: ImageCodecError.Stage) -> ImageCodecError {
        JPEGLibrary.error(status: status, diagnostics: nukejpeg_decoder_diagnostics(handle).pointee, stage: stage)
    }
}
