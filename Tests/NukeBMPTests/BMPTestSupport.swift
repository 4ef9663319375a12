import Foundation
import NukeBMP
import NukeConformance
import NukeCore
import NukeNetpbm
import Testing

/// Fixtures relative to this file, and decoding through a registry of NukeBMP alone.
enum BMPTest {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/bmp")

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    static func reference(_ name: String) throws -> Bitmap {
        try Netpbm.decode(data(name))
    }

    static let registry = ImageDecoderRegistry(codecs: [.bmp])

    static func decode(_ data: Data, configure: (inout ImageDecodingContext) -> Void = { _ in }) throws -> ImageContainer {
        var context = registry.makeContext(for: data)
        configure(&context)
        return try registry.decode(context)
    }

    static func decode(_ name: String, configure: (inout ImageDecodingContext) -> Void = { _ in }) throws -> ImageContainer {
        try decode(data(name), configure: configure)
    }

    /// A BMP file: 14-byte file header, a DIB header of `headerSize` (40 unless told), what follows.
    static func file(width: Int32, height: Int32, bits: UInt16, compression: UInt32 = 0, colors: UInt32 = 0,
                     extra: [UInt8] = [], pixels: [UInt8], offset: UInt32? = nil) -> Data {
        var dib = [UInt8]()
        func le16(_ v: UInt16) { dib += withUnsafeBytes(of: v.littleEndian, Array.init) }
        func le32(_ v: UInt32) { dib += withUnsafeBytes(of: v.littleEndian, Array.init) }
        le32(40); le32(UInt32(bitPattern: width)); le32(UInt32(bitPattern: height)); le16(1); le16(bits)
        le32(compression); le32(UInt32(pixels.count)); le32(0); le32(0); le32(colors); le32(0)
        let pixelOffset = offset ?? UInt32(14 + dib.count + extra.count)
        var file = [UInt8(ascii: "B"), UInt8(ascii: "M")]
        file += withUnsafeBytes(of: UInt32(14 + dib.count + extra.count + pixels.count).littleEndian, Array.init)
        file += [0, 0, 0, 0]
        file += withUnsafeBytes(of: pixelOffset.littleEndian, Array.init)
        return Data(file + dib + extra + pixels)
    }
}
