#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// The JPEG header hook.
enum JPEGHeaderParser {
    /// Walks JPEG marker segments to the first start-of-frame (`SOFn`).
    ///
    /// Segments before it (`APPn` such as a large EXIF or ICC block, `DQT`, `DHT`, `COM`) are
    /// skipped by their length, so the header is found as soon as the `SOF` bytes arrive. An
    /// `APP1` EXIF block that is entirely present supplies the orientation.
    /// Reads the header: the size, precision, components and progressive flag of the first
    /// start-of-frame, and the orientation of an EXIF block before it. The JPEG codec's header hook.
    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        guard data.starts(with: [0xFF, 0xD8]) else { return data.count < 2 ? .needsMoreData : .unavailable }
        return data.withUnsafeBytes { raw in parse(ImageHeader.Reader(raw.bindMemory(to: UInt8.self))) }
    }

    static func parse(_ b: ImageHeader.Reader) -> ImageHeader.ParseResult {
        var i = 2
        var orientation: ImageOrientation?
        while true {
            guard let ff = b.u8(i) else { return .needsMoreData }
            guard ff == 0xFF else { return .unavailable }
            // Any number of fill bytes may precede a marker.
            var m = i + 1
            while b.u8(m) == 0xFF { m += 1 }
            guard let marker = b.u8(m) else { return .needsMoreData }
            i = m + 1
            switch marker {
            case 0x01, 0xD0...0xD7:
                continue  // standalone markers
            case 0xD8, 0xD9, 0xDA, 0x00:
                return .unavailable  // SOI again, EOI or SOS before any frame header
            default:
                break
            }
            guard let length = b.u16be(i) else { return .needsMoreData }
            guard length >= 2 else { return .unavailable }
            if isStartOfFrame(marker) {
                guard let precision = b.u8(i + 2), let height = b.u16be(i + 3), let width = b.u16be(i + 5),
                      let components = b.u8(i + 7) else { return .needsMoreData }
                // A zero height is defined later by a DNL marker; zero width is invalid.
                guard width > 0, height > 0 else { return .unavailable }
                let progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE
                return .parsed(ImageHeader(
                    type: .jpeg, width: width, height: height, bitDepth: precision, componentCount: components,
                    hasAlpha: false, isProgressive: progressive, frameCount: 1, orientation: orientation
                ))
            }
            if marker == 0xE1, orientation == nil, i + length <= b.count, b.fourCC(i + 2, "Exif") {
                let start = b.bytes.baseAddress.map { $0 + i + 2 }
                if let start {
                    let segment = Data(bytes: start, count: length - 2)
                    orientation = ImageOrientation(exif: segment)
                }
            }
            i += length
        }
    }

    /// `SOF0`–`SOF15` except `DHT` (C4), `JPG` (C8) and `DAC` (CC).
    static func isStartOfFrame(_ marker: Int) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }
}
