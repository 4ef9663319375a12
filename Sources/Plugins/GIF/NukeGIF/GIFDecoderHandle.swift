internal import CGIFShim
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit
import NukePixels

/// The one owner of a giflib decoding handle (`nukegif_decoder`).
///
/// giflib reads through a callback over the bytes each call passes in, so one handle serves
/// a buffer that grows (progressive decoding) and random access to any frame whose bytes are
/// all there: the shim positions the read cursor at the frame's image descriptor.
final class GIFDecoderHandle {
    private let decoder: OpaquePointer
    private var isOpen = false

    init() throws(ImageCodecError) {
        guard let decoder = nukegif_decoder_create() else {
            throw GIFLibrary.error(.internalFailure, .header, "out of memory creating the giflib decoder")
        }
        self.decoder = decoder
    }

    deinit { nukegif_decoder_destroy(decoder) }

    /// The damaged frames giflib reported, or `nil`.
    var warnings: ImageDecodingWarnings? { nukegif_decoder_diagnostics(decoder).pointee.warnings }

    private func failure(_ status: nuke_status, _ stage: ImageCodecError.Stage, _ context: String) -> ImageCodecError {
        GIFLibrary.error(status: status, diagnostics: nukegif_decoder_diagnostics(decoder).pointee, stage: stage, context: context)
    }

    /// Opens giflib over the header and global colour table.
    ///
    /// The corresponding giflib function is `DGifOpen`.
    func open(_ bytes: Data) throws(ImageCodecError) {
        guard !isOpen else { return }
        let status = bytes.withUnsafeBytes { raw in
            nukegif_decoder_open(decoder, raw.bindMemory(to: UInt8.self).baseAddress!, raw.count)
        }
        guard status == NUKE_STATUS_OK else { throw failure(status, .header, "reading the GIF header") }
        isOpen = true
    }

    /// Decodes one frame's own rectangle into an `.rgba8` bitmap; rows the LZW data lacks
    /// stay transparent (counted as a warning).
    ///
    /// The corresponding giflib functions are `DGifGetImageDesc` and `DGifGetLine`.
    /// - Parameters:
    ///   - cancellation: Checked every 64 rows, through a C callback (callers check it between
    ///     frames).
    ///   - allocator: Where the frame's pixels come from (the decode's context).
    func decodeFrame(_ frame: GIFFrameRecord, index: Int, in bytes: Data, cancellation: ImageDecodingCancellation?,
                     allocator: PixelAllocator = .heap) throws(ImageCodecError) -> Bitmap {
        try open(bytes)
        precondition(frame.end <= bytes.count, "a frame is decoded once all its bytes arrived")
        if frame.width == 0 || frame.height == 0 {
            return Bitmap(width: frame.width, height: frame.height, pixelFormat: .rgba8, bytes: [])
        }
        var status = NUKE_STATUS_OK
        var rows: UInt32 = 0
        let bitmap = try allocator.makeBitmap(width: frame.width, height: frame.height, pixelFormat: .rgba8, alphaMode: .straight) { buffer in
            status = (cancellation ?? .taskOnly).withShimCancellation { shimCancellation in bytes.withUnsafeBytes { raw in
                nukegif_decoder_decode_frame(
                    decoder, raw.bindMemory(to: UInt8.self).baseAddress!, frame.end, frame.offset,
                    UInt32(frame.width), UInt32(frame.height), Int32(frame.transparentIndex),
                    buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), buffer.count, &rows,
                    shimCancellation
                )
            } }
        }
        try check(status, frame: index, rows: rows)
        return bitmap
    }

    /// Draws one frame straight onto an animation's canvas, clipped to it, as its
    /// ``GIFFrameRecord/info`` blends (source-over when it has a transparent index); rows the
    /// LZW data lacks are transparent (counted as a warning). No frame bitmap is allocated.
    ///
    /// The corresponding giflib functions are `DGifGetImageDesc` and `DGifGetLine`.
    func drawFrame(_ frame: GIFFrameRecord, index: Int, in bytes: Data, onto canvas: AnimationCanvas, cancellation: ImageDecodingCancellation?) throws(ImageCodecError) {
        try open(bytes)
        precondition(frame.end <= bytes.count, "a frame is decoded once all its bytes arrived")
        precondition(canvas.bytes.count == canvas.width * canvas.height * 4, "the canvas is width × height RGBA")
        if frame.width == 0 || frame.height == 0 || canvas.bytes.isEmpty { return }
        var rows: UInt32 = 0
        let status = (cancellation ?? .taskOnly).withShimCancellation { shimCancellation in bytes.withUnsafeBytes { raw in
            nukegif_decoder_draw_frame(
                decoder, raw.bindMemory(to: UInt8.self).baseAddress!, frame.end, frame.offset,
                UInt32(frame.width), UInt32(frame.height), Int32(frame.transparentIndex),
                Int64(frame.left), Int64(frame.top), frame.info.blending == .over ? 1 : 0,
                canvas.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(canvas.width), UInt32(canvas.height), canvas.bytes.count,
                &rows,
                shimCancellation
            )
        } }
        try check(status, frame: index, rows: rows)
    }

    /// Decodes the first frame, composited on a transparent `screen`, straight into `resampler`
    /// (an `.rgba8`, straight-alpha resampler from the screen's size) one canvas row at a time:
    /// neither the canvas nor a frame bitmap exists. Rows the LZW data lacks are transparent
    /// (counted as a warning).
    ///
    /// The corresponding giflib functions are `DGifGetImageDesc` and `DGifGetLine`.
    /// - Returns: The frame's rows that were decoded (fewer than its height when its data ends early).
    @discardableResult
    func streamFirstFrame(_ frame: GIFFrameRecord, in bytes: Data, screen: ImageSize, into destination: ImageRowDestination, cancellation: ImageDecodingCancellation?) throws(ImageCodecError) -> Int {
        try open(bytes)
        precondition(frame.end <= bytes.count, "a frame is decoded once all its bytes arrived")
        precondition(destination.size == screen && destination.pixelFormat == .rgba8, "the destination takes RGBA rows of the screen")
        let row = UnsafeMutableRawBufferPointer.allocate(byteCount: screen.width * 4, alignment: 16)
        defer { row.deallocate() }
        var rows: UInt32 = 0
        let status = (cancellation ?? .taskOnly).withShimCancellation { shimCancellation in bytes.withUnsafeBytes { raw in
            nukegif_decoder_stream_frame(
                decoder, raw.bindMemory(to: UInt8.self).baseAddress!, frame.end, frame.offset,
                UInt32(frame.width), UInt32(frame.height), Int32(frame.transparentIndex),
                Int64(frame.left), Int64(frame.top),
                row.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(screen.width), UInt32(screen.height), row.count,
                Self.pushRow, Unmanaged.passUnretained(destination).toOpaque(),
                &rows,
                shimCancellation
            )
        } }
        try check(status, frame: 0, rows: rows)
        return Int(rows)
    }

    /// The shim's row sink for ``streamFirstFrame(_:in:screen:into:cancellation:)``: hands one
    /// canvas row to the destination its context points to.
    private static let pushRow: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>, Int) -> Void = { context, row, length in
        guard let context else { return }
        Unmanaged<ImageRowDestination>.fromOpaque(context).takeUnretainedValue().push(row: UnsafeRawBufferPointer(start: row, count: length))
    }

    private func check(_ status: nuke_status, frame index: Int, rows: UInt32) throws(ImageCodecError) {
        if status == NUKE_STATUS_CANCELLED {
            throw GIFLibrary.error(.cancelled, "cancelled in GIF frame \(index + 1) after \(rows) rows")
        }
        guard status == NUKE_STATUS_OK else { throw failure(status, .decoding, "decoding GIF frame \(index + 1)") }
    }
}
