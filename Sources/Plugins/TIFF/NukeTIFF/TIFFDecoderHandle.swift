#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CTIFFShim
import NukeCore
import NukePluginKit
import NukePixels

/// Owns one libtiff file over a complete input, and the bytes libtiff reads from.
final class TIFFDecoderHandle {
    private let decoder: OpaquePointer
    /// Kept alive (and open) as long as libtiff reads it.
    private let input: Input
    private(set) var info = nuketiff_info()

    /// What libtiff reads: the complete file in memory, or an open file it reads with `pread`,
    /// only the bytes it asks for.
    enum Input {
        case bytes(Data)
        case file(ImageFileSource)
    }

    /// Opens the file and reads its first directory.
    ///
    /// - Parameter maxSingleAllocation: The most libtiff may allocate at once (a strip or tile
    ///   buffer, a tag's values): a hostile StripByteCounts cannot make it allocate more.
    /// - Throws: ``NukeCore/ImageCodecError`` with libtiff's message.
    init(_ input: Input, maxSingleAllocation: Int) throws(ImageCodecError) {
        guard let decoder = nuketiff_decoder_create() else {
            throw TIFFLibrary.error(.internalFailure, "libtiff could not allocate a decoder")
        }
        self.decoder = decoder
        self.input = input
        let limit = UInt64(max(maxSingleAllocation, 1))
        let status: nuke_status
        var what = "reading the TIFF file"
        switch input {
        case .bytes(let bytes):
            status = bytes.withUnsafeBytes { raw in
                nuketiff_decoder_open(decoder, raw.bindMemory(to: UInt8.self).baseAddress!, raw.count, limit)
            }
        case .file(let file):
            status = nuketiff_decoder_open_file(decoder, file.fileDescriptor, UInt64(file.size), limit)
            what += " \(file.path)"
        }
        guard status == NUKE_STATUS_OK else { throw failure(status, what) }
    }

    deinit { nuketiff_decoder_destroy(decoder) }

    /// The number of pages (directories) libtiff finds; `nil` when it cannot count them.
    var pageCount: Int? {
        let count = nuketiff_decoder_page_count(decoder)
        return count > 0 ? Int(count) : nil
    }

    /// What libtiff tolerated while decoding pixels: a strict decode refuses it.
    var warnings: ImageDecodingWarnings? { nuketiff_decoder_diagnostics(decoder).pointee.warnings }

    /// What libtiff tolerated in the file's directories (unknown private tags, unsorted tags,
    /// old-style JPEG): reported, not refused.
    var directoryWarnings: ImageDecodingWarnings? { nuketiff_decoder_directory_diagnostics(decoder).pointee.warnings }

    private func failure(_ status: nuke_status, _ context: String) -> ImageCodecError {
        TIFFLibrary.error(status: status, diagnostics: nuketiff_decoder_diagnostics(decoder).pointee, context: context)
    }

    /// Selects page `index` and describes it.
    func select(page index: Int) throws(ImageCodecError) {
        var info = nuketiff_info()
        let status = nuketiff_decoder_select(decoder, UInt32(clamping: index), &info)
        guard status == NUKE_STATUS_OK else { throw failure(status, "reading page \(index + 1) of the TIFF file") }
        self.info = info
    }

    /// The selected page's ICC profile, when it has one no larger than `maxSize`.
    func iccProfile(maxSize: Int) -> Data? {
        var size: UInt32 = 0
        guard let bytes = nuketiff_decoder_icc(decoder, &size), size > 0, Int(size) <= maxSize else { return nil }
        return Data(bytes: bytes, count: Int(size))
    }

    /// Decodes the selected page into `destination`: into its memory when it keeps the page,
    /// else a row at a time as each is decoded, so that memory holds a band of the page (a
    /// scanline, a strip or a row of tiles) and the resampler's window, never the page.
    func decode(channels: Int, wide: Bool, into destination: ImageRowDestination, cmyk: CMYKRowConverter?,
                context: ImageDecodingContext) throws(ImageCodecError) {
        var output = nuketiff_output()
        output.channels = Int32(channels)
        output.wide = wide ? 1 : 0
        if let buffer = destination.buffer {
            output.pixels = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
            output.stride = destination.bytesPerRow
        } else {
            output.sink = Self.pushRow
        }
        try withExtendedLifetime(destination) { () throws(ImageCodecError) in
            output.sink_context = Unmanaged.passUnretained(destination).toOpaque()
            try read(&output, cmyk: cmyk, context: context)
        }
    }

    private func read(_ output: inout nuketiff_output, cmyk: CMYKRowConverter?, context: ImageDecodingContext) throws(ImageCodecError) {
        if let cmyk {
            output.cmyk = cmyk.function
            output.cmyk_context = cmyk.context
        }
        let status = withExtendedLifetime(cmyk) {
            context.withShimCancellation { cancellation in nuketiff_decoder_read(decoder, &output, cancellation) }
        }
        guard status == NUKE_STATUS_OK else { throw failure(status, "decoding the TIFF image") }
    }

    /// The shim's row sink: hands one row to the destination its context points to.
    private static let pushRow: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>, Int, UInt32) -> Int32 = {
        context, row, length, _ in
        guard let context else { return 1 }
        Unmanaged<ImageRowDestination>.fromOpaque(context).takeUnretainedValue().push(row: UnsafeRawBufferPointer(start: row, count: length))
        return 0
    }
}
