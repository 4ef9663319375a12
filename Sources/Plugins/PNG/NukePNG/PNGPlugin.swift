#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// NukePNG's decoder plugin: the PNG signature, the incremental decoder and the header hook.
public enum PNGPlugin: ImageDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { PNGLibrary.codecName }

    /// Whether the data starts with the PNG signature.
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        hasSignature(data)
    }

    public static func makeIncrementalDecoder(context: ImageDecodingContext) -> any IncrementalImageDecoding {
        PNGIncrementalDecoder(context: context)
    }

    /// Reads the `IHDR` chunk, and an APNG `acTL` chunk when the chunks before the first `IDAT`
    /// have arrived.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        PNGHeaderParser.parse(data)
    }

    static func hasSignature(_ data: Data) -> Bool {
        data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }
}

extension ImageDecoders {
    /// Decodes PNG with libpng's progressive reader, for complete files and downloads alike.
    ///
    /// Add the product to an app's `Package.swift`; linking it registers the decoder (and
    /// ``ImageEncoders/PNG``) with the shared registries:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukePNG", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Output: gray files decode to `.gray8`/`.grayAlpha8`, colour and palette files to
    /// `.rgb8`/`.rgba8`; a `tRNS` chunk adds an alpha channel; 1/2/4-bit gray is scaled to
    /// 8 bits; 16-bit samples are scaled to 8 bits (`(v × 255 + 32895) >> 16`), or kept as
    /// native-endian `UInt16` when the context `ImageDecodingContext.prefersHighBitDepth`.
    /// Alpha is straight. The image carries the file's ICC profile (`iCCP`), gamma (`gAMA`),
    /// sRGB rendering intent (`sRGB`) and EXIF block (`eXIf`) with its orientation; other
    /// ancillary chunks (text, including zTXt) are skipped without being decompressed.
    ///
    /// Progressive decoding: `decodePartiallyDownloadedData(_:)` feeds libpng only the
    /// bytes it has not seen. An interlaced file yields a preview per newly completed Adam7
    /// pass (`ImageContainer.UserInfoKey.scanNumberKey` = passes complete, 1...7), each
    /// pixel's Adam7 block filled with the pass's pixel; a non-interlaced file yields a
    /// preview whenever new rows arrived (`ImageContainer.UserInfoKey.rowCountKey`), the
    /// rows below being zero. `decode(_:)` on the same instance feeds the rest; the result
    /// equals a one-shot decode.
    ///
    /// Errors: data that ends before `IEND` is `.incomplete` (even when every row arrived);
    /// libpng's errors (bad CRC, bad zlib data, bad IHDR) are `.corrupt` with libpng's
    /// message; the `ImageLimits` are checked when the first `IDAT` starts, before the
    /// pixels are allocated.
    ///
    /// The corresponding libpng function is `png_process_data`.
    public typealias PNG = PluginImageDecoder<PNGPlugin>
}

extension PluginImageDecoder where Plugin == PNGPlugin {
    /// Creates a PNG decoder that keeps 16-bit samples (`prefersHighBitDepth`) or scales them
    /// to 8 bits.
    ///
    /// - Parameters:
    ///   - prefersHighBitDepth: Keep 16-bit samples instead of scaling them to 8 bits.
    ///   - limits: Bounds checked before pixels are allocated.
    ///   - cancellation: Checked between rows.
    public convenience init(prefersHighBitDepth: Bool, limits: ImageLimits = .default, cancellation: ImageDecodingCancellation? = nil) {
        self.init(context: ImageDecodingContext(data: Data(), prefersHighBitDepth: prefersHighBitDepth, limits: limits, cancellation: cancellation))
    }
}

extension ImageCodec {
    /// PNG, decoded and encoded with libpng: every colour type and bit depth, Adam7
    /// interlacing with a preview per pass, 16-bit samples on request, ICC, gamma, sRGB
    /// intent and EXIF orientation; APNG animations.
    public static let png = ImageCodec(
        info: ImageCodecInfo(
            name: "NukePNG", type: .png, capabilities: [.decode, .encode, .progressive, .highBitDepth],
            library: PNGLibrary.name, libraryVersion: PNGLibrary.version
        ),
        plugin: PNGPlugin.self,
        makeEncoder: { ImageEncoders.PNG(options: $0) }
    )
}

/// Announces ``NukeCore/ImageCodec/png`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukePNGRecord: ImageCodecs.Record = { ImageCodecs.announce(.png) }
