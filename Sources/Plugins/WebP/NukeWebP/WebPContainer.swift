#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// What the RIFF container of a WebP file holds, read in pure Swift as its bytes arrive.
///
/// libwebp decodes the bitstreams (`VP8 `, `VP8L`, with `ALPH`); the container is read here,
/// chunk by chunk, so a download knows the canvas, the metadata and which animation frames are
/// complete without re-parsing anything: ``scan(_:limits:)`` resumes where the last call
/// stopped, at the cost of the new chunk headers only.
///
/// The layout (the WebP container specification): `RIFF` size `WEBP`, then either a single
/// `VP8 ` or `VP8L` chunk (a simple file), or `VP8X` (canvas size and flags) followed by
/// `ICCP`, `ANIM`, the image (`ALPH` + `VP8 `, or `VP8L`) or `ANMF` frames, `EXIF` and `XMP `.
struct WebPContainer {
    /// A complete animation frame (`ANMF`).
    struct Frame {
        var info: AnimationFrameInfo
        /// The frame's bitstream (`ALPH` + `VP8 `, or `VP8L`) in the file.
        var payload: Range<Int>
    }

    /// The `VP8X` chunk, when the file is extended.
    struct Extended {
        var canvasWidth: Int
        var canvasHeight: Int
        var hasAnimation: Bool
    }

    private(set) var extended: Extended?
    /// Where the image's bitstream starts (the `ALPH`, `VP8 ` or `VP8L` chunk header) in a still file.
    private(set) var imageStart: Int?
    /// The end of the RIFF payload (`8 + RIFF size`), once the header is read.
    private(set) var riffEnd: Int?
    /// The next chunk header's offset.
    private(set) var position = 0
    private(set) var icc: Data?
    private(set) var exif: Data?
    private(set) var xmp: Data?
    /// `ANIM`: the background colour (RGBA) and loop count (0 = forever).
    private(set) var backgroundColor: [UInt8]?
    private(set) var loopCount: Int?
    /// Every complete frame, in order.
    private(set) var frames: [Frame] = []

    /// `true` when every chunk inside the RIFF size has arrived.
    var isComplete: Bool { riffEnd.map { position >= $0 } ?? false }

    /// `true` for an animated file (the `VP8X` animation flag).
    var isAnimated: Bool { extended?.hasAnimation ?? false }

    /// `true` when `data` starts like a WebP file (`RIFF` … `WEBP`), or could (fewer bytes).
    static func hasSignature(_ data: Data) -> Bool {
        let bytes = [UInt8](data.prefix(12))
        guard bytes.count >= 12 else { return false }
        return bytes[0..<4].elementsEqual("RIFF".utf8) && bytes[8..<12].elementsEqual("WEBP".utf8)
    }

    /// Reads chunks that completed since the last call.
    ///
    /// - Parameters:
    ///   - bytes: Every byte received so far, indexed from 0.
    ///   - limits: The frame count and every frame's size are checked as frames are found.
    /// - Throws: ``NukeCore/ImageCodecError`` `.corrupt` for a malformed container (a chunk past
    ///   the RIFF size, a frame outside the canvas, frames in a file without the animation flag),
    ///   `.limitExceeded` for too many frames.
    mutating func scan(_ bytes: Data, limits: ImageLimits) throws(ImageCodecError) {
        precondition(bytes.startIndex == 0, "the scanner indexes from 0")
        if riffEnd == nil {
            guard bytes.count >= 12 else { return }
            guard Self.hasSignature(bytes) else {
                throw WebPLibrary.error(.corrupt, .header, "the data does not start with a RIFF WEBP header")
            }
            let size = Int(Self.uint32(bytes, 4))
            guard size >= 4 + 8 else { throw WebPLibrary.error(.corrupt, .header, "the RIFF size \(size) is too small for a WebP file") }
            riffEnd = 8 + size + (size & 1)
            position = 12
        }
        guard let riffEnd else { return }
        while position + 8 <= min(bytes.count, riffEnd) {
            let fourCC = String(decoding: bytes[position..<(position + 4)], as: UTF8.self)
            let size = Int(Self.uint32(bytes, position + 4))
            let payload = position + 8
            let (end, overflow) = payload.addingReportingOverflow(size + (size & 1))
            guard !overflow, payload + size <= riffEnd else {
                throw WebPLibrary.error(.corrupt, "the \(fourCC.debugDescription) chunk at offset \(position) runs past the end of the RIFF data (\(riffEnd) bytes)")
            }
            if fourCC == "VP8 " || fourCC == "VP8L" || fourCC == "ALPH" {
                // The still image's bitstream may be decoded incrementally: note where it starts
                // before it is complete.
                if imageStart == nil, !isAnimated { imageStart = position }
            }
            if ["ICCP", "EXIF", "XMP "].contains(fourCC), size > limits.maxMetadataBytes {
                // Checked on the declared size, before the bytes are kept.
                throw WebPLibrary.error(.limitExceeded, "the \(fourCC.filter { $0 != " " }) chunk of \(size) bytes exceeds the maximum metadata size \(limits.maxMetadataBytes)")
            }
            guard payload + size <= bytes.count else { return }
            try read(fourCC, bytes[payload..<(payload + size)], at: position, limits: limits)
            position = min(end, riffEnd)
        }
    }

    private mutating func read(_ fourCC: String, _ payload: Data, at offset: Int, limits: ImageLimits) throws(ImageCodecError) {
        let p = payload.startIndex
        switch fourCC {
        case "VP8X":
            guard offset == 12, payload.count >= 10 else {
                throw WebPLibrary.error(.corrupt, .header, "the VP8X chunk must come first and hold 10 bytes")
            }
            let flags = payload[p]
            extended = Extended(
                canvasWidth: Int(Self.uint24(payload, p + 4)) + 1,
                canvasHeight: Int(Self.uint24(payload, p + 7)) + 1,
                hasAnimation: flags & 0x02 != 0
            )
        case "ICCP": if icc == nil { icc = Data(payload) }
        case "EXIF": if exif == nil { exif = Data(payload) }
        case "XMP ": if xmp == nil { xmp = Data(payload) }
        case "ANIM":
            guard payload.count >= 6 else { throw WebPLibrary.error(.corrupt, "the ANIM chunk holds \(payload.count) bytes, not 6") }
            // Stored as blue, green, red, alpha.
            backgroundColor = [payload[p + 2], payload[p + 1], payload[p], payload[p + 3]]
            loopCount = Int(payload[p + 4]) | Int(payload[p + 5]) << 8
        case "ANMF":
            try readFrame(payload, at: offset, limits: limits)
        default:
            break  // Unknown chunks are skipped, as the specification asks.
        }
    }

    private mutating func readFrame(_ payload: Data, at offset: Int, limits: ImageLimits) throws(ImageCodecError) {
        guard let extended, extended.hasAnimation else {
            throw WebPLibrary.error(.corrupt, "an ANMF frame at offset \(offset) in a file without the VP8X animation flag")
        }
        guard payload.count > 16 else { throw WebPLibrary.error(.corrupt, "the ANMF chunk at offset \(offset) holds no frame") }
        guard frames.count < limits.maxFrameCount else {
            throw WebPLibrary.error(.limitExceeded, "the WebP has more than the maximum \(limits.maxFrameCount) frames")
        }
        let p = payload.startIndex
        let x = Int(Self.uint24(payload, p)) * 2, y = Int(Self.uint24(payload, p + 3)) * 2
        let width = Int(Self.uint24(payload, p + 6)) + 1, height = Int(Self.uint24(payload, p + 9)) + 1
        let duration = Int(Self.uint24(payload, p + 12))
        let flags = payload[p + 15]
        guard x + width <= extended.canvasWidth, y + height <= extended.canvasHeight else {
            // libwebp's demuxer (and so Chromium) refuses such files.
            throw WebPLibrary.error(.corrupt, "frame \(frames.count + 1) (\(width)×\(height) at \(x),\(y)) lies outside the \(extended.canvasWidth)×\(extended.canvasHeight) canvas")
        }
        try limits.check(width: width, height: height, bytesPerPixel: 4, format: .webp, codec: WebPLibrary.codecName)
        let info = AnimationFrameInfo(
            x: x, y: y, width: width, height: height,
            duration: Double(duration) / 1000,
            disposal: flags & 0x01 != 0 ? .background : .none,
            blending: flags & 0x02 != 0 ? .source : .over
        )
        frames.append(Frame(info: info, payload: (p + 16)..<payload.endIndex))
    }

    static func uint32(_ data: Data, _ at: Int) -> UInt32 {
        UInt32(data[at]) | UInt32(data[at + 1]) << 8 | UInt32(data[at + 2]) << 16 | UInt32(data[at + 3]) << 24
    }

    static func uint24(_ data: Data, _ at: Int) -> UInt32 {
        UInt32(data[at]) | UInt32(data[at + 1]) << 8 | UInt32(data[at + 2]) << 16
    }
}
