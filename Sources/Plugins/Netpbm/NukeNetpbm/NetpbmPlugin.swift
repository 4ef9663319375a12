#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

extension ImageType {
    /// Netpbm: PAM (`P7`), PPM (`P6`) and PGM (`P5`), binary forms. Registered with the sniffer
    /// when ``NukeCore/ImageCodec/netpbm`` is.
    public static let netpbm: ImageType = "public.pbm"
}

/// NukeNetpbm's decoder plugin: PAM, PPM and PGM files, the format of the reference decodes the
/// conformance kit compares with and of `nuke convert`'s raw output.
public enum NetpbmPlugin: WholeFileDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { NetpbmLibrary.codecName }

    /// Whether the data starts with `P5`, `P6` or `P7` and white space.
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        hasSignature(data)
    }

    /// Decodes the complete file.
    public static func decode(_ bytes: Data, context: ImageDecodingContext) throws(ImageCodecError) -> ImageContainer {
        try NetpbmDecoding(context: context).decode(bytes)
    }

    /// Reads the size and channels from the header.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        NetpbmHeaderParser.parse(data)
    }

    static func hasSignature(_ data: Data) -> Bool {
        guard data.count >= 3, data[data.startIndex] == UInt8(ascii: "P") else { return false }
        let kind = data[data.startIndex + 1], space = data[data.startIndex + 2]
        return (UInt8(ascii: "5")...UInt8(ascii: "7")).contains(kind) && (space == 0x20 || (0x09...0x0D).contains(space))
    }
}

extension ImageDecoders {
    /// Decodes PAM, PPM and PGM (binary forms, maxval 255 or 65535) in Swift: gray, gray+alpha,
    /// RGB or RGBA, 8 or 16 bits, exactly as stored. Limits are checked after the header.
    public typealias Netpbm = PluginImageDecoder<NetpbmPlugin>
}

extension ImageCodec {
    /// PAM, PPM and PGM, read and written in Swift. Registering it also registers the format with
    /// the sniffer (`P5`, `P6`, `P7`).
    public static let netpbm: ImageCodec = {
        ImageType.register(.netpbm, name: "Netpbm", filenameExtensions: ["pam", "ppm", "pgm", "pnm"]) { NetpbmPlugin.hasSignature($0) }
        return netpbmCodec
    }()

    private static let netpbmCodec = ImageCodec(
        info: ImageCodecInfo(name: "NukeNetpbm", type: .netpbm, capabilities: [.decode, .encode, .scaledDecode, .highBitDepth]),
        plugin: NetpbmPlugin.self,
        makeEncoder: { ImageEncoders.PAM(options: $0) }
    )
}

/// Announces ``NukeCore/ImageCodec/netpbm`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeNetpbmRecord: ImageCodecs.Record = { ImageCodecs.announce(.netpbm) }
