import Foundation
import Testing
@testable import NukeCore

struct ImageOrientationTests {
    /// A TIFF header with one IFD0 entry: Orientation (0x0112), SHORT, count 1.
    static func exif(_ value: UInt16, littleEndian: Bool, prefix: Bool) -> Data {
        func u16(_ v: UInt16) -> [UInt8] { littleEndian ? [UInt8(v & 0xFF), UInt8(v >> 8)] : [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ v: UInt32) -> [UInt8] { littleEndian ? u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) : u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF)) }
        var bytes: [UInt8] = prefix ? Array("Exif".utf8) + [0, 0] : []
        bytes += littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]
        bytes += u16(42) + u32(8)
        bytes += u16(2)                                          // two entries
        bytes += u16(0x010F) + u16(2) + u32(4) + Array("Nuke".utf8) // Make, ASCII
        bytes += u16(0x0112) + u16(3) + u32(1) + u16(value) + u16(0)
        bytes += u32(0)
        return Data(bytes)
    }

    @Test(arguments: ImageOrientation.allCases, [true, false])
    func parsesOrientation(_ orientation: ImageOrientation, littleEndian: Bool) {
        #expect(ImageOrientation(exif: Self.exif(UInt16(orientation.rawValue), littleEndian: littleEndian, prefix: true)) == orientation)
        #expect(ImageOrientation(exif: Self.exif(UInt16(orientation.rawValue), littleEndian: littleEndian, prefix: false)) == orientation)
    }

    @Test func rejectsMalformedExif() {
        #expect(ImageOrientation(exif: Self.exif(9, littleEndian: true, prefix: true)) == nil)
        #expect(ImageOrientation(exif: Self.exif(0, littleEndian: false, prefix: true)) == nil)
        #expect(ImageOrientation(exif: Data()) == nil)
        #expect(ImageOrientation(exif: Data("Exif\0\0II*\0\u{FF}\u{FF}\u{FF}\u{7F}".utf8)) == nil)
        let truncated = Self.exif(6, littleEndian: true, prefix: true).prefix(20)
        #expect(ImageOrientation(exif: truncated) == nil)
    }

    @Test func swapsDimensions() {
        #expect(ImageOrientation.allCases.filter(\.swapsDimensions) == [.leftMirrored, .right, .rightMirrored, .left])
    }
}
