#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// NukeICO's decoder plugin: Windows icons (ICO) and cursors (CUR), read in Swift.
///
/// An app adds it in Package.swift (PNG entries, common in icons of 256 pixels, need NukePNG
/// too); linking it registers it:
///
/// ```swift
/// .target(name: "App", dependencies: [
///     .product(name: "NukeICO", package: "NukeCodecs"),
///     .product(name: "NukePNG", package: "NukeCodecs"),
/// ])
/// ```
public enum ICOPlugin: WholeFileDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { ICOLibrary.codecName }

    /// Whether the data starts with an ICO or CUR directory header.
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        kind(data) != nil
    }

    /// ICO (type 1) or CUR (type 2): a reserved zero word, the type, at least one entry; `nil`
    /// when `data` starts as neither.
    static func kind(_ data: Data) -> ImageType? {
        let b = [UInt8](data.prefix(10))
        guard b.count >= 6, b[0] == 0, b[1] == 0, b[2] == 1 || b[2] == 2, b[3] == 0, b[4] != 0 || b[5] != 0,
              b.count < 10 || b[9] == 0 else { return nil }
        return b[2] == 1 ? .ico : .cur
    }

    /// Decodes the complete file.
    public static func decode(_ bytes: Data, context: ImageDecodingContext) throws(ImageCodecError) -> ImageContainer {
        try ICODecoding(context: context).decode(bytes)
    }

    /// Reads the largest entry's size.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        ICOHeaderParser.parse(data)
    }
}

extension ImageDecoders {
    /// Decodes ICO and CUR in Swift: the entry that best fits the target size (the largest
    /// without one; else the smallest at least as large on both sides, the higher bit depth
    /// first), always as rgba8. DIB entries go through NukeBMP, their AND mask applied as alpha
    /// unless 32-bit pixels carry alpha; PNG entries through the registry's PNG decoder (link
    /// NukePNG; without one they fail with `.unsupported`). `userInfo` holds the entry count,
    /// the entry decoded, every entry's size and a cursor's ``CursorHotspot``.
    public typealias ICO = PluginImageDecoder<ICOPlugin>
}

extension ImageType {
    /// ICO, the Windows icon format (`com.microsoft.ico`), sniffed once NukeICO's codec is registered.
    public static let ico: ImageType = "com.microsoft.ico"
    /// CUR, the Windows cursor format (`com.microsoft.cur`), sniffed once NukeICO's codec is registered.
    public static let cur: ImageType = "com.microsoft.cur"
}

extension ImageCodec {
    /// ICO icons, read and written in Swift.
    public static let ico: ImageCodec = {
        ImageType.register(.ico, name: "ICO", filenameExtensions: ["ico"]) { ICOPlugin.kind($0) == .ico }
        return ImageCodec(
            info: ImageCodecInfo(name: "NukeICO", type: .ico, capabilities: [.decode, .encode, .scaledDecode]),
            plugin: ICOPlugin.self,
            makeEncoder: { ImageEncoders.ICO(options: $0) }
        )
    }()

    /// CUR cursors, read and written in Swift (the hotspot written at the top-left corner).
    public static let cur: ImageCodec = {
        ImageType.register(.cur, name: "CUR", filenameExtensions: ["cur"]) { ICOPlugin.kind($0) == .cur }
        return ImageCodec(
            info: ImageCodecInfo(name: "NukeICO", type: .cur, capabilities: [.decode, .encode, .scaledDecode]),
            plugin: ICOPlugin.self,
            makeEncoder: { ImageEncoders.ICO(options: $0, hotspot: CursorHotspot(x: 0, y: 0)) }
        )
    }()
}

/// Announces ``NukeCore/ImageCodec/ico`` and ``NukeCore/ImageCodec/cur`` from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeICORecord: ImageCodecs.Record = { ImageCodecs.announce(.ico) }

@section("nuke_codecs") @used
let nukeCURRecord: ImageCodecs.Record = { ImageCodecs.announce(.cur) }
