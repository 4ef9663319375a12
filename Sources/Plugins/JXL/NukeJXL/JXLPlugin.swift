#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// NukeJXL's decoder plugin: the JPEG XL signatures, the incremental decoder and the header hook.
public enum JXLPlugin: ImageDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { JXLLibrary.codecName }

    /// Whether the data starts like a bare codestream (`FF 0A`) or the JPEG XL container
    /// (`00 00 00 0C 4A 58 4C 20 0D 0A 87 0A`).
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        JXLHeaderParser.hasSignature(data)
    }

    public static func makeIncrementalDecoder(context: ImageDecodingContext) -> any IncrementalImageDecoding {
        JXLIncrementalDecoder(context: context)
    }

    /// Reads the size from the codestream's `SizeHeader`, in pure Swift.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        JXLHeaderParser.parse(data)
    }
}

extension ImageDecoders {
    /// Decodes JPEG XL with libjxl: lossy and lossless, 8 to 32 bits, grey and colour, alpha,
    /// still and animated, bare codestreams and the container, for complete files and downloads.
    ///
    /// Add the product to an app's `Package.swift`; linking it registers the decoder (and
    /// ``ImageEncoders/JXL``) with the shared registries:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukeJXL", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Output: `.gray8`, `.grayAlpha8`, `.rgb8` or `.rgba8`; the 16-bit formats for files of
    /// more than 8 bits (float files included) when `ImageDecodingContext.prefersHighBitDepth`.
    /// Alpha is straight, premultiplied when `ImageDecodingContext.prefersPremultipliedAlpha`
    /// (a premultiplied file is then kept as it is). The file's orientation is reported in
    /// `Image.orientation` and not applied. The ICC profile, the file's or the one
    /// libjxl describes an enum colour encoding with, is in `Image.colorInfo`, except for
    /// an enum encoding with an nclx equivalent (sRGB, Display P3, BT.2020 with PQ or HLG...),
    /// which is reported as `ImageContainer.UserInfoKey.nclxKey` instead, as HEIF's.
    ///
    /// Animations: the first frame is the container's image and
    /// `ImageContainer.animation` decodes the others on demand (libjxl composites
    /// them: every frame is a whole canvas), with durations from the animation's ticks per second
    /// and the loop count (0 = forever).
    ///
    /// Progressive decoding: one libjxl decoder serves the whole download and is given only the
    /// new bytes; `decodePartiallyDownloadedData(_:)` returns a preview at each progressive pass
    /// (`kPasses`, `ImageContainer.UserInfoKey.scanNumberKey` = passes so far).
    ///
    /// Decode to size: libjxl 0.7 cannot decode at a reduced size, so the core's resampler
    /// finishes a full decode. Limits are checked at the basic info, before any pixel memory;
    /// the shim refuses too large a size itself before libjxl allocates a frame.
    ///
    /// The corresponding libjxl functions are `JxlDecoderProcessInput` and `JxlDecoderFlushImage`.
    public typealias JXL = PluginImageDecoder<JXLPlugin>
}

extension ImageType {
    /// JPEG XL (`public.jpeg-xl`, Nuke's `AssetType.jxl`): a bare codestream or the ISO-BMFF
    /// container, sniffed once NukeJXL's codec is registered.
    public static let jxl: ImageType = "public.jpeg-xl"
}

extension ImageCodec {
    /// JPEG XL, decoded and encoded with libjxl: lossy and lossless, 8 and 16 bits, alpha,
    /// animation, progressive previews, ICC and enum colour, JPEG recompression.
    public static let jxl: ImageCodec = {
        ImageType.register(.jxl, name: "JPEG XL", filenameExtensions: ["jxl"]) { JXLHeaderParser.hasSignature($0) }
        return ImageCodec(
            info: ImageCodecInfo(
                name: "NukeJXL", type: .jxl, capabilities: [.decode, .encode, .progressive, .scaledDecode, .animation, .highBitDepth],
                library: JXLLibrary.name, libraryVersion: JXLLibrary.version
            ),
            plugin: JXLPlugin.self,
            makeEncoder: { ImageEncoders.JXL(options: $0) }
        )
    }()
}

/// Announces ``NukeCore/ImageCodec/jxl`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeJXLRecord: ImageCodecs.Record = { ImageCodecs.announce(.jxl) }
