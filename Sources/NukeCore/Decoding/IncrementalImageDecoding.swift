#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The contract between NukeCore and a codec plugin: the plugin receives only bytes it has not
/// seen and answers with events.
///
/// The core owns the accumulated input. It calls ``push(_:)`` with each new chunk, ``finish()``
/// once no more will come, and ``next()`` until it answers ``ImageDecodingEvent/needsMoreData``
/// (or the final image). Every call may throw: a failure is reported as soon as the decoder
/// finds it, not after the last byte. One instance serves one decode and is used by one thread
/// at a time; events are plain values, so a decode can be forwarded across a process boundary.
///
/// ```swift
/// var decoder = try makeDecoder()
/// decoder.push(chunk)                     // only the new bytes
/// loop: while true {
///     switch try decoder.next() {
///     case .needsMoreData: break loop     // wait for the next chunk
///     case .header(let header): print(header.size)
///     case .preview(let preview): show(preview)
///     case .final(let image): show(image); break loop
///     }
/// }
/// ```
///
/// Nuke's ``ImageDecoding`` stays the public face for custom decoders: the core adapts one to the
/// other in both directions (``IncrementalDecoderAdapter`` gives an incremental decoder Nuke's
/// face; the registry wraps a Nuke-style decoder to drive it incrementally).
public protocol IncrementalImageDecoding {
    /// Gives the decoder bytes that follow the ones it was given before.
    ///
    /// Cheap: decoders keep the bytes (a `Data` shares its storage) and work in ``next()``.
    /// - Parameter bytes: The new bytes only; never empty.
    mutating func push(_ bytes: Data)

    /// Says that no more bytes will come: running out of data is now an error.
    mutating func finish()

    /// Decodes as far as the bytes given so far allow and reports what happened.
    ///
    /// Returns at most one preview per call: call again for the next (a chunk may complete several
    /// progressive scans, passes or frames). Before ``finish()`` it returns
    /// ``ImageDecodingEvent/needsMoreData`` when the bytes are used up; after ``finish()`` it skips
    /// the remaining previews and returns ``ImageDecodingEvent/final(_:)`` or throws, never
    /// `needsMoreData`. A decoder may return the final image before ``finish()`` when the data
    /// shows the image is complete (PNG's `IEND`, JPEG's `EOI`). After the final image or an error,
    /// the decoder is done.
    ///
    /// - Throws: ``ImageCodecError``: `.incomplete` (only after ``finish()``), `.corrupt`,
    ///   `.unsupported`, `.limitExceeded`, `.cancelled`.
    mutating func next() throws -> ImageDecodingEvent

    /// Says whether the caller wants previews. A caller that pushes a complete file in pieces
    /// (reading it from disk or a socket without keeping it) turns them off, and the decoder
    /// then only consumes the bytes until ``finish()``, without drawing previews. Default: on;
    /// decoders without previews ignore it.
    mutating func setWantsPreviews(_ wantsPreviews: Bool)

    /// Offers a sink for the final image's rows, before the first ``push(_:)``
    /// (``ImageDecoderRegistry/decode(_:reading:rowsTo:)``). A decoder that can hand the rows over
    /// as it produces them, so that the full-size image never exists, returns `true`: it then calls
    /// the sink's ``ImageRowSink/begin(width:height:pixelFormat:alphaMode:)`` once and
    /// ``ImageRowSink/write(rows:count:bytesPerRow:)`` for every row of the final image, and the
    /// final container's image is ``Bitmap/empty`` (its metadata and `userInfo` as usual).
    /// Previews, when on, are still bitmaps. Default: `false`.
    mutating func setRowSink(_ sink: any ImageRowSink) -> Bool
}

extension IncrementalImageDecoding {
    public mutating func setWantsPreviews(_ wantsPreviews: Bool) {}

    /// Declines: the registry hands the decoded bitmap's rows to the sink.
    public mutating func setRowSink(_ sink: any ImageRowSink) -> Bool { false }
}

/// What an ``IncrementalImageDecoding`` reports.
public enum ImageDecodingEvent: Sendable {
    /// Every byte given so far is used: push more (or finish).
    case needsMoreData
    /// The header was read, before any pixel memory was allocated. Optional: decoders whose
    /// format has a header hook (``ImageCodec/parseHeader``) need not report it.
    case header(ImageHeader)
    /// A progressive preview: a scan, an interlace pass, the rows decoded so far or a completed
    /// frame (``ImageContainer/isPreview`` is `true`).
    case preview(ImageContainer)
    /// The final image. The decode is over.
    case final(ImageContainer)
}

extension IncrementalImageDecoding {
    /// Runs a decoder whose input is finished to its final image, skipping its header and
    /// previews: what the registry, a session and NukeIsolation do once the bytes are all there.
    ///
    /// - Throws: The decoder's error, or ``ImageCodecError`` `.internalFailure` when it asks for
    ///   more data after the end of the input.
    public mutating func finalImage(format: ImageType?, codec: String? = nil) throws -> ImageContainer {
        while true {
            switch try next() {
            case .final(let container): return container
            case .header, .preview: continue
            case .needsMoreData:
                throw ImageCodecError(.internalFailure, stage: .decoding, format: format, codec: codec,
                                      message: "the decoder asked for more data after the end of the input")
            }
        }
    }
}
