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
public enum XBMPlugin: ImageDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { XBMLibrary.codecName }

    /// Whether the data starts as an XBM file (`#define <name>_width`).
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        ImageType(data.prefix(512)) == .xbm
    }

    /// A decoder that reads the whole file at `finish()`.
    public static func makeIncrementalDecoder(context: ImageDecodingContext) -> any IncrementalImageDecoding {
        WholeInputDecoder { (bytes) throws(ImageCodecError) in try XBMDecoding(context: context).decode(bytes) }
    }

    /// Reads the size from the `#define`s.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        XBMHeaderParser.parse(data)
    }

    /// No previews.
    public static var decodesPartialData: Bool { false }
}

extension ImageDecoders {
    /// Decodes XBM in Swift: X11 (`char`) and X10 (`short`) arrays, bits least significant
    /// first, rows padded to a value. Output gray8: a set bit black (0), the X11 foreground as
    /// `bitmap(1)`, xv and browsers drew it; a clear bit white (255). Pillow reads the same bits
    /// the other way round (mode "1", a set bit 255): its references are inverted in the
    /// fixtures. The hotspot is in `userInfo`.
    public typealias XBM = PluginImageDecoder<XBMPlugin>
}

extension ImageCodec {
    /// XBM, read and written in Swift.
    public static let xbm = ImageCodec(
        info: ImageCodecInfo(name: "NukeXBM", type: .xbm, capabilities: [.decode, .encode, .scaledDecode]),
        plugin: XBMPlugin.self,
        makeEncoder: { ImageEncoders.XBM(options: $0) }
    )
}

/// Announces ``NukeCore/ImageCodec/xbm`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeXBMRecord: ImageCodecs.Record = { ImageCodecs.announce(.xbm) }
