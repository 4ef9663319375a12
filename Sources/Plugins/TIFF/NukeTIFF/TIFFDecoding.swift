#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CTIFFShim
import NukeCore
import NukePluginKit
import NukePixels

/// Decodes one page of a complete TIFF file.
///
/// libtiff reads a TIFF by its directories' offsets, which may point anywhere in the file (the
/// first directory is often at the end): it needs the whole file. Downloads go through a
/// `WholeInputDecoder` (``TIFFPlugin``).
struct TIFFDecoding {
    /// The decode request: limits, allocator, alpha, bit depth, target size and plan, page.
    let context: ImageDecodingContext

    /// Decodes the complete file in `bytes`, or the context's ``NukeCore/ImageDecodingContext/file``
    /// when it has one (`bytes` then holds only its first bytes): libtiff reads from the file only
    /// the directories and strips it needs.
    func decode(_ bytes: Data) throws(ImageCodecError) -> ImageContainer {
        let page = context.userInfo[ImageDecodingContext.tiffPageOption] as? Int ?? 0
        // libtiff allocates a strip or tile buffer, a tag's values, at most this at once: four
        // times the decoded bytes allowed (a strip of 16-bit CMYK and alpha decoded to 8-bit RGBA
        // is 2.5 times its output), and never less than 8 MiB (its own directory buffers).
        let (strip, overflow) = context.limits.maxDecodedBytes.multipliedReportingOverflow(by: 4)
        let maxSingleAllocation = overflow ? 1 << 40 : min(max(strip, 8 << 20), 1 << 40)
        var pageCount: Int?
        let handle: TIFFDecoderHandle
        let inputByteCount: Int
        if let file = context.file {
            handle = try TIFFDecoderHandle(.file(file), maxSingleAllocation: maxSingleAllocation)
            pageCount = handle.pageCount
            inputByteCount = file.size
        } else {
            if case .parsed(let header) = TIFFHeaderParser.parse(bytes) { pageCount = header.frameCount }
            handle = try TIFFDecoderHandle(.bytes(bytes), maxSingleAllocation: maxSingleAllocation)
            inputByteCount = bytes.count
        }
        if let pageCount, page >= pageCount || page < 0 {
            throw TIFFLibrary.error(.unsupported, "page \(page) (0-based) asked for, the file has \(pageCount)")
        }
        try handle.select(page: page)
        let info = handle.info
        let size = ImageSize(width: Int(info.width), height: Int(info.height))
        let channels = Int(info.channels)
        let wide = context.prefersHighBitDepth && info.wide_available != 0
        let pixelFormat = PixelFormat(channels: PixelFormat.Channels(rawValue: channels) ?? .rgba, bitsPerChannel: wide ? 16 : 8)
        try context.limits.check(
            width: size.width, height: size.height, bytesPerPixel: pixelFormat.bytesPerPixel, format: .tiff, codec: TIFFLibrary.codecName,
            inputByteCount: inputByteCount
        )
        let alphaMode: AlphaMode = info.alpha == 0 ? .none : info.premultiplied != 0 ? .premultiplied : .straight
        var iccProfile = handle.iccProfile(maxSize: context.limits.maxMetadataBytes)
        var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [
            .isProgressiveKey: false,
            .tiffPageKey: page,
            .tiffCompressionKey: TIFFNames.compression(Int(info.compression)),
            .tiffBitsPerSampleKey: Int(info.bits_per_sample),
            .tiffPhotometricKey: TIFFNames.photometric(Int(info.photometric)),
            .tiffTiledKey: info.tiled != 0,
        ]
        if let pageCount { userInfo[.tiffPageCountKey] = pageCount }

        // CMYK only through a colour manager (NukeColor): never a naive formula's wrong colours.
        var cmyk: CMYKRowConverter?
        if info.cmyk != 0 {
            guard let manager = ImageColorManagement.current else {
                throw TIFFLibrary.error(.unsupported, "a CMYK TIFF needs a colour manager: link NukeColor (or install one with ImageColorManagement.install)")
            }
            let target = context.colorConversion ?? .sRGB
            guard let converter = try manager.cmykConverter(profile: iccProfile, inverted: false, to: target, pixelCount: size.width * size.height) else {
                throw TIFFLibrary.error(.unsupported, "no CMYK profile to convert this CMYK TIFF with (none in the file, no standard one installed)")
            }
            cmyk = converter
            // The rows are in the target's colour: its profile (none for sRGB) describes them.
            if case .profile(let profile) = target { iccProfile = profile } else { iccProfile = nil }
            userInfo[.colorConversionKey] = converter.summary
        }

        // Into the core's destination: the page, or for a decode to size its rows a band at a time into the resampler.
        let destination = try ImageRowDestination(size: size, pixelFormat: pixelFormat, alphaMode: alphaMode, context: context)
        try handle.decode(channels: channels, wide: wide, into: destination, cmyk: cmyk, context: context)
        var (bitmap, sizeInfo) = destination.finish()
        userInfo.merge(sizeInfo) { $1 }
        try TIFFLibrary.checkCancellation(context)
        if let warnings = handle.warnings { userInfo[.warningsKey] = warnings }
        if let directoryWarnings = handle.directoryWarnings { userInfo[.tiffDirectoryWarningsKey] = directoryWarnings }
        // Straight alpha unless asked for premultiplied (which the core's driver makes).
        if alphaMode == .premultiplied, !context.prefersPremultipliedAlpha { bitmap = bitmap.unpremultiplied() }
        let orientation = ImageOrientation(rawValue: UInt8(clamping: info.orientation)) ?? .up
        let image = Image(bitmap: bitmap, orientation: orientation, colorInfo: ColorInfo(iccProfile: iccProfile))
        return ImageContainer(image: image, type: .tiff, isPreview: false, userInfo: userInfo)
    }
}
