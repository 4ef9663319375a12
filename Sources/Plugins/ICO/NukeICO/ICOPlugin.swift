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
public enum ICOPlugin: ImageDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { ICOLibrary.codecName }

    /// Whether the data starts with an ICO or CUR directory header.
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        let type = ImageType(data.prefix(16))
        return type == .ico || type == .cur
    }

    /// A decoder that reads the whole file at `finish()`.
    public static func makeIncrementalDecoder(context: ImageDecodingContext) -> any IncrementalImageDecoding {
        WholeInputDecoder { (bytes) throws(ImageCodecError) in try ICODecoding(context: context).decode(bytes) }
    }

    /// Reads the largest entry's size.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        ICOHeaderParser.parse(data)
    }

    /// No previews.
    public static var decodesPartialData: Bool { false }
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

extension ImageCodec {
    /// ICO icons, read and written in Swift.
    public static let ico = ImageCodec(
        info: ImageCodecInfo(name: "NukeICO", type: .ico, capabilities: [.decode, .encode, .scaledDecode]),
        plugin: ICOPlugin.self,
        makeEncoder: { ImageEncoders.ICO(options: $0) }
    )

    /// CUR cursors, read and written in Swift (the hotspot written at the top-left corner).
    public static let cur = ImageCodec(
        info: ImageCodecInfo(name: "NukeICO", type: .cur, capabilities: [.decode, .encode, .scaledDecode]),
        plugin: ICOPlugin.self,
        makeEncoder: { ImageEncoders.ICO(options: $0, hotspot: CursorHotspot(x: 0, y: 0)) }
    )
}

/// Announces ``NukeCore/ImageCodec/ico`` and ``NukeCore/ImageCodec/cur`` from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeICORecord: ImageCodecs.Record = { ImageCodecs.announce(.ico) }

@section("nuke_codecs") @used
let nukeCURRecord: ImageCodecs.Record = { ImageCodecs.announce(.cur) }
