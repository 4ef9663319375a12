#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// Walks a GIF's blocks as bytes arrive, without decoding pixels.
///
/// It finds the logical screen, each image's byte range, its graphics control extension and
/// the NETSCAPE2.0 loop count, so the decoder can check limits before allocating and call giflib
/// for a frame only once all of the frame's bytes are there. It resumes where it stopped, one
/// sub-block (at most 256 bytes) at a time, so scanning a file fed in any chunks is linear.
struct GIFScanner: Sendable {
    /// What the header says.
    struct Screen: Sendable, Hashable {
        var width: Int
        var height: Int
        /// The background colour (RGBA) when there is a global colour table.
        var backgroundColor: [UInt8]?
    }

    private enum Record: Sendable {
        /// Walking an extension's sub-blocks; `index` counts them.
        case `extension`(label: UInt8, index: Int, isNetscape: Bool)
        /// Walking an image's data sub-blocks.
        case image(GIFFrameRecord)
    }

    private(set) var screen: Screen?
    private(set) var frames: [GIFFrameRecord] = []
    /// The NETSCAPE2.0 (or ANIMEXTS1.0) loop count as stored; `nil` without one.
    private(set) var loopCount: Int?
    /// `true` once the trailer (0x3B), or bytes that start no block after the first image, ended the stream.
    private(set) var isComplete = false
    /// Offset of the next byte to look at.
    private(set) var position = 0
    /// `true` when the data scanned so far ends inside the header or a record, or before the
    /// header: not at a boundary between blocks.
    func endsInsideRecord(count: Int) -> Bool {
        screen == nil || current != nil || position < count
    }
    private var current: Record?
    private var pendingControl: (delay: Int, disposal: Int, transparent: Int)?

    /// Checks a frame's own size, and what compositing it needs, against the limits: a GIF may
    /// declare a 65,535 × 65,535 frame on a tiny screen, and giflib would decode all of it.
    static func checkLimits(width: Int, height: Int, screen: Screen, limits: ImageLimits) throws(ImageCodecError) {
        guard width > 0, height > 0 else { return }
        try limits.check(width: width, height: height, bytesPerPixel: 4, format: .gif, codec: GIFLibrary.codecName)
        let needed = ImageAnimation.iteratorBytes(canvasSize: ImageSize(width: screen.width, height: screen.height), largestFrameBytes: width * height * 4)
        guard let needed, needed <= limits.maxDecodedBytes else {
            throw GIFLibrary.error(.limitExceeded, "compositing a \(width)×\(height) GIF frame on a \(screen.width)×\(screen.height) screen needs more than the maximum \(limits.maxDecodedBytes) bytes")
        }
    }

    /// Scans what `bytes` adds.
    ///
    /// - Parameters:
    ///   - bytes: Every byte of the file received so far (a prefix of the file), indexed from 0.
    ///   - limits: The frame count is checked as images are found.
    /// - Throws: ``ImageCodecError`` `.corrupt` for a file that is not a GIF or has a block
    ///   no GIF has; `.limitExceeded` for too many frames.
    mutating func scan(_ bytes: Data, limits: ImageLimits) throws(ImageCodecError) {
        precondition(bytes.startIndex == 0, "the scanner indexes from 0")
        let count = bytes.count
        if screen == nil {
            let signature = Array(bytes.prefix(6))
            let expected: [[UInt8]] = [Array("GIF87a".utf8), Array("GIF89a".utf8)]
            if !expected.contains(where: { $0.starts(with: signature) }) {
                throw GIFLibrary.error(.corrupt, .header, "not a GIF file: the signature is not GIF87a or GIF89a")
            }
            guard count >= 13 else { return }
            let packed = bytes[10]
            let tableSize = packed & 0x80 != 0 ? 3 << (Int(packed & 7) + 1) : 0
            guard count >= 13 + tableSize else { return }
            var background: [UInt8]?
            if tableSize > 0 {
                let index = Int(bytes[11])
                if index * 3 + 2 < tableSize {
                    background = [bytes[13 + index * 3], bytes[14 + index * 3], bytes[15 + index * 3], 255]
                }
            }
            screen = Screen(
                width: Int(bytes[6]) | Int(bytes[7]) << 8,
                height: Int(bytes[8]) | Int(bytes[9]) << 8,
                backgroundColor: background
            )
            position = 13 + tableSize
        }
        while !isComplete {
            if let record = current {
                guard position < count else { return }
                let size = Int(bytes[position])
                if size == 0 {
                    position += 1
                    current = nil
                    if case .image(var frame) = record {
                        frame.end = position
                        frames.append(frame)
                    }
                    continue
                }
                guard position + 1 + size <= count else { return }
                if case .extension(let label, let index, let isNetscape) = record {
                    let body = position + 1
                    var netscape = isNetscape
                    if label == 0xF9, index == 0, size >= 4 {
                        let flags = bytes[body]
                        pendingControl = (
                            delay: Int(bytes[body + 1]) | Int(bytes[body + 2]) << 8,
                            disposal: Int(flags >> 2) & 7,
                            transparent: flags & 1 != 0 ? Int(bytes[body + 3]) : -1
                        )
                    } else if label == 0xFF, index == 0, size == 11 {
                        let name = Array(bytes[body..<(body + 11)])
                        netscape = name == Array("NETSCAPE2.0".utf8) || name == Array("ANIMEXTS1.0".utf8)
                    } else if label == 0xFF, index == 1, isNetscape, size >= 3, bytes[body] == 1 {
                        loopCount = Int(bytes[body + 1]) | Int(bytes[body + 2]) << 8
                    }
                    current = .extension(label: label, index: index + 1, isNetscape: netscape)
                }
                position += 1 + size
                continue
            }
            guard position < count else { return }
            switch bytes[position] {
            case 0x21:
                guard position + 2 <= count else { return }
                current = .extension(label: bytes[position + 1], index: 0, isNetscape: false)
                position += 2
            case 0x2C:
                guard position + 10 <= count else { return }
                let p = position
                let packed = bytes[p + 9]
                let tableSize = packed & 0x80 != 0 ? 3 << (Int(packed & 7) + 1) : 0
                guard p + 10 + tableSize + 1 <= count else { return }
                guard frames.count < limits.maxFrameCount else {
                    throw GIFLibrary.error(.limitExceeded, "the GIF has more than the maximum \(limits.maxFrameCount) frames")
                }
                let width = Int(bytes[p + 5]) | Int(bytes[p + 6]) << 8
                let height = Int(bytes[p + 7]) | Int(bytes[p + 8]) << 8
                if let screen { try Self.checkLimits(width: width, height: height, screen: screen, limits: limits) }
                let control = pendingControl ?? (delay: 0, disposal: 0, transparent: -1)
                pendingControl = nil
                current = .image(GIFFrameRecord(
                    offset: p, end: p,
                    left: Int(bytes[p + 1]) | Int(bytes[p + 2]) << 8,
                    top: Int(bytes[p + 3]) | Int(bytes[p + 4]) << 8,
                    width: width,
                    height: height,
                    isInterlaced: packed & 0x40 != 0,
                    transparentIndex: control.transparent,
                    delay: control.delay,
                    disposalMethod: control.disposal
                ))
                position = p + 10 + tableSize + 1 // past the LZW minimum code size
            case 0x3B:
                position += 1
                isComplete = true
            default:
                // Browsers stop at bytes that start no block and show the frames before them.
                if frames.isEmpty {
                    throw GIFLibrary.error(.corrupt, "unknown GIF block 0x\(String(bytes[position], radix: 16)) at offset \(position), before any image")
                }
                isComplete = true
            }
        }
    }
}
