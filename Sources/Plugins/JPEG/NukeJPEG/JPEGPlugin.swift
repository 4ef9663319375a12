#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// NukeJPEG's decoder plugin: the JPEG signature, the incremental decoder and the header hook.
public enum JPEGPlugin: ImageDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { JPEGLibrary.codecName }

    /// libjpeg's DCT scaling, N/8 of the size rounded up: the reductions a decode to size is
    /// made at (the core chooses, `ImageDecodingContext.nativeReduction(of:among:embedded:)`).
    public static let nativeReductions = ImageNativeReductions.fractions(1...8, of: 8)

    /// Whether the data starts with a JPEG signature (or the caller declared JPEG).
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        context.type == .jpeg || data.starts(with: [0xFF, 0xD8, 0xFF])
    }

    public static func makeIncrementalDecoder(context: ImageDecodingContext) -> any IncrementalImageDecoding {
        JPEGIncrementalDecoder(context: context)
    }

    /// Reads the header: the size, precision, components and progressive flag of the first
    /// start-of-frame, and the orientation of an EXIF block before it.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        JPEGHeaderParser.parse(data)
    }
}

extension ImageDecoders {
    /// Decodes JPEG with libjpeg-turbo: baseline, progressive and arithmetic-coded files,
    /// grayscale (to `PixelFormat.gray8`), YCbCr and RGB (to `PixelFormat.rgb8`), and
    /// CMYK/YCCK (converted to `PixelFormat.rgb8`: through the file's profile to sRGB when NukeColor
    /// is linked, the registry's default for colour a bitmap cannot carry; else by the plain
    /// formula), with progressive previews and DCT-scaled decoding.
    ///
    /// Add the product to an app target and the decoder registers itself with
    /// `ImageDecoderRegistry.shared`:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukeJPEG", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Pixels equal `djpeg -pnm` (accurate integer IDCT, fancy upsampling, block smoothing).
    /// With a `ImageDecodingContext.targetSize` libjpeg decodes at the smallest N/8 scale that
    /// covers the core plan's native floor (twice the final size; the final size itself with
    /// `prefersFastScaling`, as `djpeg -scale N/8`), and the core's resampler finishes (the
    /// container's userInfo has `ImageContainer.UserInfoKey.decodeScaleKey` and
    /// `ImageContainer.UserInfoKey.originalSizeKey`). The EXIF orientation, the EXIF block
    /// and the ICC profile are kept; pixels are not rotated.
    ///
    /// Progressive decoding: `decodePartiallyDownloadedData(_:)` feeds libjpeg only the
    /// new bytes and returns a preview each time a scan of a progressive (multi-scan) file is
    /// complete — a scan is complete when the next SOS marker or the EOI marker has arrived.
    /// Each call returns at most one preview, of the next scan not yet shown; when one chunk
    /// completed several scans, calling again with the same data returns the next (and `nil`
    /// once none is pending), which `ImageDecodingSession` does. A 10-scan file fed in chunks
    /// therefore gives 9 previews before its last bytes, and a 10th when the EOI arrives in
    /// partial data. Baseline files give no previews but are decoded as the bytes
    /// arrive, so `decode(_:)` on the same instance only finishes the work. The final image
    /// equals a one-shot decode. libjpeg's arithmetic decoder cannot suspend, so arithmetic-coded
    /// data is shown to libjpeg only up to the last SOS or EOI marker received (previews come
    /// all the same).
    ///
    /// Limits: the declared size is checked against `ImageLimits` right after the header;
    /// the pixel buffer plus, for multi-scan files, libjpeg's coefficient buffer must fit in
    /// `ImageLimits.maxDecodedBytes` (which also bounds libjpeg's own allocations), and
    /// files with more than `ImageLimits.maxScanCount` scans are refused.
    ///
    /// 12-bit and lossless JPEGs are not supported by the system libjpeg-turbo 2.1.5 and fail
    /// with `.unsupported`.
    public typealias JPEG = PluginImageDecoder<JPEGPlugin>
}

extension ImageCodec {
    /// JPEG through libjpeg-turbo: decoding (baseline, progressive, arithmetic, gray, CMYK),
    /// progressive previews, DCT-scaled decoding and encoding.
    public static let jpeg = ImageCodec(
        info: ImageCodecInfo(
            name: "NukeJPEG", type: .jpeg, capabilities: [.decode, .encode, .progressive, .scaledDecode],
            library: JPEGLibrary.name, libraryVersion: JPEGLibrary.version, nativeReductions: JPEGPlugin.nativeReductions
        ),
        plugin: JPEGPlugin.self,
        makeEncoder: { ImageEncoders.JPEG(options: $0) }
    )
}

/// Announces ``NukeCore/ImageCodec/jpeg`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeJPEGRecord: ImageCodecs.Record = { ImageCodecs.announce(.jpeg) }
