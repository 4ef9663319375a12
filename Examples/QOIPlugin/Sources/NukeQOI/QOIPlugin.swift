import Foundation
import NukeCore
import NukePluginKit

extension ImageType {
    /// QOI, the "Quite OK Image" format (qoiformat.org).
    public static let qoi: ImageType = "org.qoiformat.qoi"
}

/// The QOI decoder plugin: what the format is, its header and its pixels. Everything else — the
/// limits (checked on the header before a byte of pixels is allocated), cancellation, decode to a
/// target size, the output stage — is the core's (``NukePluginKit/ImageDecoderPlugin``). QOI's
/// pixels only make sense from the first byte to the last: it decodes the whole file, with no
/// previews (``NukePluginKit/WholeFileDecoderPlugin``).
public enum QOIPlugin: WholeFileDecoderPlugin {
    public static var codecName: String? { "NukeQOI" }

    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        data.starts(with: QOIHeader.magic)
    }

    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        do {
            let h = try QOIHeader.read(data)
            return .parsed(ImageHeader(type: .qoi, width: h.width, height: h.height, bitDepth: 8, componentCount: h.channels, frameCount: 1))
        } catch {
            return error.code == .incomplete ? .needsMoreData : .unavailable
        }
    }

    public static func decode(_ data: Data, context: ImageDecodingContext) throws(ImageCodecError) -> ImageContainer {
        ImageContainer(image: Image(bitmap: try QOIDecoding.decode(data, allocator: context.allocator)), type: .qoi)
    }
}

/// The 14-byte header: magic, width and height (big-endian), channels, colour space.
struct QOIHeader {
    static let magic: [UInt8] = Array("qoif".utf8)
    static let size = 14
    let width: Int, height: Int, channels: Int

    static func read(_ data: Data) throws(ImageCodecError) -> QOIHeader {
        let b = [UInt8](data.prefix(size))
        guard b.count == size else { throw error(.incomplete, "the data ends inside the header (\(data.count) bytes)") }
        guard b.starts(with: magic) else { throw error(.corrupt, "no qoif magic") }
        func be32(_ i: Int) -> Int { Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) }
        let header = QOIHeader(width: be32(4), height: be32(8), channels: Int(b[12]))
        guard header.width > 0, header.height > 0 else { throw error(.corrupt, "the image is \(header.width)×\(header.height)") }
        guard header.channels == 3 || header.channels == 4, b[13] <= 1 else {
            throw error(.corrupt, "channels \(b[12]) and colour space \(b[13]) are not 3 or 4 and 0 or 1")
        }
        return header
    }

    static func error(_ code: ImageCodecError.Code, _ message: String) -> ImageCodecError {
        ImageCodecError(code, stage: .decoding, format: .qoi, codec: "NukeQOI", message: message)
    }
}

/// The operations, their tags and the running state both directions share.
enum QOIOp {
    static let index: UInt8 = 0x00, diff: UInt8 = 0x40, luma: UInt8 = 0x80, run: UInt8 = 0xC0, rgb: UInt8 = 0xFE, rgba: UInt8 = 0xFF
    static let end: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 1]

    static func hash(_ p: SIMD4<UInt8>) -> Int {
        (Int(p.x) * 3 + Int(p.y) * 5 + Int(p.z) * 7 + Int(p.w) * 11) % 64
    }
}

enum QOIDecoding {
    /// The pixels, as the file stores them (RGB or RGBA, 8 bits), in memory from `allocator`.
    static func decode(_ data: Data, allocator: PixelAllocator) throws(ImageCodecError) -> Bitmap {
        let header = try QOIHeader.read(data)
        let bytes = [UInt8](data)
        let format: PixelFormat = header.channels == 4 ? .rgba8 : .rgb8
        return try allocator.makeBitmap(width: header.width, height: header.height, pixelFormat: format) { (out) throws(ImageCodecError) in
            var index = [SIMD4<UInt8>](repeating: .zero, count: 64)
            var pixel = SIMD4<UInt8>(0, 0, 0, 255)
            var p = QOIHeader.size, run = 0
            let end = bytes.count - QOIOp.end.count
            for offset in stride(from: 0, to: out.count, by: header.channels) {
                if run > 0 {
                    run -= 1
                } else {
                    guard p < end else { throw QOIHeader.error(.incomplete, "the data ends at pixel \(offset / header.channels)") }
                    let tag = bytes[p]
                    p += 1
                    switch tag {
                    case QOIOp.rgb, QOIOp.rgba:
                        let count = tag == QOIOp.rgb ? 3 : 4
                        guard p + count <= end else { throw QOIHeader.error(.incomplete, "the data ends inside a pixel") }
                        for c in 0..<count { pixel[c] = bytes[p + c] }
                        p += count
                    case _ where tag & 0xC0 == QOIOp.index: pixel = index[Int(tag)]
                    case _ where tag & 0xC0 == QOIOp.diff:
                        pixel &+= SIMD4(tag >> 4 & 3, tag >> 2 & 3, tag & 3, 2) &- SIMD4(2, 2, 2, 2)
                    case _ where tag & 0xC0 == QOIOp.luma:
                        guard p < end else { throw QOIHeader.error(.incomplete, "the data ends inside a pixel") }
                        let dg = (tag & 0x3F) &- 32, second = bytes[p]
                        p += 1
                        pixel &+= SIMD4(dg &+ (second >> 4) &- 8, dg, dg &+ (second & 0x0F) &- 8, 0)
                    default: run = Int(tag & 0x3F)
                    }
                    index[QOIOp.hash(pixel)] = pixel
                }
                for c in 0..<header.channels { out[offset + c] = pixel[c] }
            }
        }
    }
}

extension ImageDecoders {
    /// The Nuke-style QOI decoder: `ImageDecoders.QOI(limits:cancellation:)`, or registered.
    public typealias QOI = PluginImageDecoder<QOIPlugin>
}

extension ImageCodec {
    /// QOI, read and written in Swift. Using it registers the format with the sniffer, so that
    /// `ImageType(data)` knows QOI under the registry the codec is in (the app's or the kit's).
    public static let qoi: ImageCodec = {
        ImageType.register(.qoi, name: "QOI", filenameExtensions: ["qoi"]) { $0.starts(with: QOIHeader.magic) }
        return ImageCodec(info: ImageCodecInfo(name: "NukeQOI", type: .qoi, capabilities: [.decode, .encode, .scaledDecode]),
                          plugin: QOIPlugin.self, makeEncoder: { _ in QOIEncoder() })
    }()
}

/// Announces ``NukeCore/ImageCodec/qoi`` to `ImageDecoderRegistry.shared` and the encoders when
/// the app links NukeQOI: the one place the plugin registers, as every NukeCodecs plugin does.
@section("nuke_codecs") @used
let nukeQOIRecord: ImageCodecs.Record = { ImageCodecs.announce(.qoi) }
