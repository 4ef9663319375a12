#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// NukeXBM's decoder plugin: X11 and X10 bitmaps (C source), read in Swift.
///
/// An app adds it in Package.swift; linking it registers it:
///
/// ```swift
/// .target(name: "App", dependencies: [.product(name: "NukeXBM", package: "NukeCodecs")])
/// ```
public enum XBMPlugin: WholeFileDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { XBMLibrary.codecName }

    /// Whether the data starts as an XBM file (`#define <name>_width`).
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        hasSignature(data)
    }

    /// Returns `true` when `data` is an X bitmap: C source whose first line is
    /// `#define <name>_width <n>`, after white space and C comments.
    static func hasSignature(_ data: Data) -> Bool {
        guard let text = String(bytes: data.prefix(512), encoding: .isoLatin1) else { return false }
        var rest = Substring(text)
        while true {
            rest = rest.drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
            guard rest.hasPrefix("/*") else { break }
            guard let end = rest.range(of: "*/") else { return false }
            rest = rest[end.upperBound...]
        }
        guard rest.hasPrefix("#define") else { return false }
        let line = rest.prefix(while: { $0 != "\n" && $0 != "\r" })
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        return words.count >= 3 && words[1].hasSuffix("_width") && Int(words[2]) != nil
    }

    /// Decodes the complete file.
    public static func decode(_ bytes: Data, context: ImageDecodingContext) throws(ImageCodecError) -> ImageContainer {
        try XBMDecoding(context: context).decode(bytes)
    }

    /// Reads the size from the `#define`s.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        XBMHeaderParser.parse(data)
    }
}

extension ImageDecoders {
    /// Decodes XBM in Swift: X11 (`char`) and X10 (`short`) arrays, bits least significant
    /// first, rows padded to a value. Output gray8: a set bit black (0), the X11 foreground as
    /// `bitmap(1)`, xv and browsers drew it; a clear bit white (255). Pillow reads the same bits
    /// the other way round (mode "1", a set bit 255): its references are inverted in the
    /// fixtures. The hotspot is in `userInfo`.
    public typealias XBM = PluginImageDecoder<XBMPlugin>
}

extension ImageType {
    /// XBM, the X bitmap (`public.xbitmap-image`), sniffed once NukeXBM's codec is registered.
    public static let xbm: ImageType = "public.xbitmap-image"
}

extension ImageCodec {
    /// XBM, read and written in Swift.
    public static let xbm: ImageCodec = {
        ImageType.register(.xbm, name: "XBM", filenameExtensions: ["xbm"]) { XBMPlugin.hasSignature($0) }
        return ImageCodec(
            info: ImageCodecInfo(name: "NukeXBM", type: .xbm, capabilities: [.decode, .encode, .scaledDecode]),
            plugin: XBMPlugin.self,
            makeEncoder: { ImageEncoders.XBM(options: $0) }
        )
    }()
}

/// Announces ``NukeCore/ImageCodec/xbm`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeXBMRecord: ImageCodecs.Record = { ImageCodecs.announce(.xbm) }
