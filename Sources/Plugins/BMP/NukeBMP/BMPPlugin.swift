#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// NukeBMP's decoder plugin: Windows and OS/2 bitmaps, read in Swift.
///
/// An app adds it in Package.swift; linking it registers it:
///
/// ```swift
/// .target(name: "App", dependencies: [.product(name: "NukeBMP", package: "NukeCodecs")])
/// ```
public enum BMPPlugin: WholeFileDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { BMPLibrary.codecName }

    /// Whether the data starts with `BM`.
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        data.count >= 2 && data[data.startIndex] == UInt8(ascii: "B") && data[data.startIndex + 1] == UInt8(ascii: "M")
    }

    /// The sniffer's test for ``NukeCore/ImageType/bmp``: "BM", then (once 18 bytes are here) a
    /// DIB header size that some version uses.
    static func hasSignature(_ data: Data) -> Bool {
        let b = [UInt8](data.prefix(18))
        guard b.count >= 2, b[0] == 0x42, b[1] == 0x4D else { return false }
        guard b.count == 18 else { return true }
        let headerSize = UInt32(b[14]) | UInt32(b[15]) << 8 | UInt32(b[16]) << 16 | UInt32(b[17]) << 24
        return [12, 16, 40, 52, 56, 64, 108, 124].contains(headerSize)
    }

    /// Decodes the complete file.
    public static func decode(_ bytes: Data, context: ImageDecodingContext) throws(ImageCodecError) -> ImageContainer {
        try BMPDecoding(context: context).decode(bytes)
    }

    /// Reads the size and channels from the headers.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        BMPHeaderParser.parse(data)
    }
}

extension ImageDecoders {
    /// Decodes BMP in Swift: every DIB header (core, OS/2 2.x, INFO, V2–V5), 1/2/4/8-bit
    /// palettes, 16/24/32-bit pixels, `BI_BITFIELDS` and `BI_ALPHABITFIELDS` with any masks,
    /// RLE4, RLE8 and OS/2 RLE24, top-down rows and a V5 header's embedded ICC profile.
    ///
    /// Output: gray8 for a gray palette, rgba8 when the masks have alpha (all-zero alpha is
    /// opaque, as in browsers) or RLE skips pixels (left transparent), rgb8 otherwise. Alpha
    /// with `BI_RGB` as Chromium decides it: a V3+ header's alpha mask holds; a 32-bit INFO
    /// header's fourth byte is unused (Pillow and Firefox agree), except in an ICO.
    /// What the file has wrong and the decoder tolerates (a palette larger than needed, an
    /// index past the palette, a pixel offset inside the headers, RLE data without its end
    /// marker) is in `userInfo[.warningsKey]`, and refused by a strict decode.
    public typealias BMP = PluginImageDecoder<BMPPlugin>
}

extension ImageType {
    /// BMP, the Windows bitmap (`com.microsoft.bmp`), sniffed once NukeBMP's codec is registered.
    public static let bmp: ImageType = "com.microsoft.bmp"
}

extension ImageCodec {
    /// BMP, read and written in Swift.
    public static let bmp: ImageCodec = {
        ImageType.register(.bmp, name: "BMP", filenameExtensions: ["bmp", "dib"]) { BMPPlugin.hasSignature($0) }
        return ImageCodec(
            info: ImageCodecInfo(name: "NukeBMP", type: .bmp, capabilities: [.decode, .encode, .scaledDecode]),
            plugin: BMPPlugin.self,
            makeEncoder: { ImageEncoders.BMP(options: $0) }
        )
    }()
}

/// Announces ``NukeCore/ImageCodec/bmp`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeBMPRecord: ImageCodecs.Record = { ImageCodecs.announce(.bmp) }
