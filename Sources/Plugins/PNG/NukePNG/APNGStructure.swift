#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit
internal import CPNGShim

/// The animation of an APNG file, read from its chunks: `acTL`, then for each frame an `fcTL`
/// and its image data (`IDAT` for a default image that is frame 0, `fdAT` otherwise).
///
/// libpng 1.6.39 on Debian reads no APNG chunks, so each frame is re-framed as a standalone PNG
/// (``standalonePNG(frame:in:)``) that libpng decodes like any other. A file whose APNG chunks
/// are broken (sequence numbers out of order, a frame outside the canvas, a frame without data,
/// a frame count that does not match) is shown as its default image, as browsers do:
/// ``parse(_:)`` returns `nil` with the reason.
struct APNGStructure: Sendable {
    struct Frame: Sendable {
        var info: AnimationFrameInfo
        /// The frame's compressed image data: the payloads of its `IDAT` chunks, or of its `fdAT`
        /// chunks without their sequence numbers (ranges into the file).
        var data: [Range<Int>]
    }

    var width: Int
    var height: Int
    /// IHDR's bit depth, colour type, compression, filter and interlace bytes.
    var ihdrTail: [UInt8]
    var loopCount: Int
    var frames: [Frame]
    /// Whole chunks (length, type, data, CRC) every frame's stream needs: PLTE, tRNS, gAMA,
    /// cHRM, sRGB, iCCP, sBIT.
    var sharedChunks: [Range<Int>]
    /// `true` when the default image (IDAT) is frame 0.
    var defaultImageIsFirstFrame: Bool

    /// The outcome of ``parse(_:)``.
    enum Outcome {
        case notAnimated
        case animated(APNGStructure)
        /// The file has APNG chunks, but they are broken: show the default image.
        case broken(String)
    }

    /// Reads the structure of a complete PNG file.
    static func parse(_ data: Data) -> Outcome {
        data.withUnsafeBytes { raw in parse(raw.bindMemory(to: UInt8.self)) }
    }

    private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> Outcome {
        let reader = ImageHeader.Reader(b)
        let u32 = reader.u32be, u16 = reader.u16be
        guard let width = u32(16), let height = u32(20), b.count >= 33 else { return .notAnimated }
        let ihdrTail = Array(b[24..<29])
        var numFrames: Int?
        var numPlays = 0
        var frames: [Frame] = []
        var shared: [Range<Int>] = []
        var sawIDAT = false
        var defaultIsFirst = false
        var expectedSequence = 0
        for chunk in PNGChunks(reader, from: 33) {
            guard chunk.isComplete(in: b.count) else { break }
            let length = chunk.length
            let payload = chunk.payload
            switch chunk.name {
            case "acTL":
                guard !sawIDAT, let count = u32(payload.lowerBound), let plays = u32(payload.lowerBound + 4) else {
                    return .broken("acTL after the image data")
                }
                numFrames = count
                numPlays = plays
            case "fcTL":
                guard numFrames != nil else { break }
                guard length == 26, let sequence = u32(payload.lowerBound) else { return .broken("fcTL of \(length) bytes") }
                guard sequence == expectedSequence else { return .broken("fcTL sequence number \(sequence), expected \(expectedSequence)") }
                expectedSequence += 1
                let p = payload.lowerBound
                guard let w = u32(p + 4), let h = u32(p + 8), let x = u32(p + 12), let y = u32(p + 16),
                      let delayNum = u16(p + 20), let delayDen = u16(p + 22) else { return .broken("short fcTL") }
                guard w > 0, h > 0, x + w <= width, y + h <= height else {
                    return .broken("frame \(frames.count) (\(w)×\(h) at \(x),\(y)) lies outside the \(width)×\(height) canvas")
                }
                let dispose = b[p + 24], blend = b[p + 25]
                guard dispose <= 2, blend <= 1 else { return .broken("frame \(frames.count): dispose \(dispose), blend \(blend)") }
                if frames.isEmpty, !sawIDAT { defaultIsFirst = true }
                let seconds = Double(delayNum) / Double(delayDen == 0 ? 100 : delayDen)
                // A first frame disposed to previous has nothing to return to: to background.
                let disposal: AnimationFrameInfo.Disposal = dispose == 1 ? .background : dispose == 2 ? (frames.isEmpty ? .background : .previous) : .none
                let info = AnimationFrameInfo(x: x, y: y, width: w, height: h, duration: seconds,
                                              disposal: disposal, blending: blend == 0 ? .source : .over)
                frames.append(Frame(info: info, data: []))
            case "IDAT":
                sawIDAT = true
                if defaultIsFirst, frames.count == 1 { frames[0].data.append(payload) }
            case "fdAT":
                guard numFrames != nil else { break }
                guard let sequence = u32(payload.lowerBound), length >= 4 else { return .broken("short fdAT") }
                guard sequence == expectedSequence else { return .broken("fdAT sequence number \(sequence), expected \(expectedSequence)") }
                expectedSequence += 1
                guard !frames.isEmpty, !(defaultIsFirst && frames.count == 1) else { return .broken("fdAT before its fcTL") }
                frames[frames.count - 1].data.append((payload.lowerBound + 4)..<payload.upperBound)
            case "PLTE", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT":
                if !sawIDAT { shared.append(chunk.whole) }
            case "IEND":
                break
            default:
                break
            }
            if chunk.is("IEND") { break }
        }
        guard let numFrames else { return .notAnimated }
        guard numFrames == frames.count, numFrames > 0 else {
            return .broken("acTL declares \(numFrames) frames, the file has \(frames.count)")
        }
        if let empty = frames.firstIndex(where: { $0.data.isEmpty }) { return .broken("frame \(empty) has no image data") }
        return .animated(APNGStructure(
            width: width, height: height, ihdrTail: ihdrTail, loopCount: numPlays, frames: frames,
            sharedChunks: shared, defaultImageIsFirstFrame: defaultIsFirst
        ))
    }

    /// Frame `index` as a standalone PNG: the signature, an IHDR of the frame's size, the shared
    /// chunks, the frame's data as IDAT chunks, IEND.
    func standalonePNG(frame index: Int, in file: Data) -> Data {
        let frame = frames[index]
        var out = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var ihdr: [UInt8] = []
        for value in [frame.info.width, frame.info.height] {
            ihdr += [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        out.reserveCapacity(8 + 25 + sharedChunks.reduce(0) { $0 + $1.count } + frame.data.reduce(0) { $0 + $1.count + 12 } + 12)
        Self.appendChunk("IHDR", Data(ihdr + ihdrTail), to: &out)
        let start = file.startIndex
        for range in sharedChunks { out.append(file[(start + range.lowerBound)..<(start + range.upperBound)]) }
        for range in frame.data {
            Self.appendChunk("IDAT", file[(start + range.lowerBound)..<(start + range.upperBound)], to: &out)
        }
        Self.appendChunk("IEND", Data(), to: &out)
        return out
    }

    /// Appends a chunk: length, type, payload and the CRC of type and payload.
    static func appendChunk(_ type: StaticString, _ payload: Data, to out: inout Data) {
        let length = payload.count
        out.append(contentsOf: [UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        let typeBytes = type.withUTF8Buffer { Array($0) }
        out.append(contentsOf: typeBytes)
        out.append(payload)
        var crc = typeBytes.withUnsafeBufferPointer { nukepng_crc32(0, $0.baseAddress, $0.count) }
        crc = payload.withUnsafeBytes { nukepng_crc32(crc, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
        out.append(contentsOf: [UInt8(crc >> 24 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)])
    }
}
