#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CWebPShim
import NukeCore
import NukePluginKit
import NukePixels

/// One-call decoding of a complete still WebP, at full size or to a target size.
enum WebPStillDecoding {
    /// What libwebp reduces on its own, declared in the codec's info: its scaler, used from ÷2
    /// (measured with NukeBenchmarks' "WebP decode to size" rows: at ÷2 the scaler costs more than
    /// it saves).
    static let nativeReductions = ImageNativeReductions.scaler(minimumFactor: 2)

    /// The largest output decoded in one `WebPDecode` call, without cancellation checks inside.
    static let oneCallPixels = 4 << 20

    /// Decodes the complete file in `bytes`.
    ///
    /// For a decode to size of an image without alpha, libwebp's scaler makes the reduction the
    /// core chooses among ``nativeReductions`` (whole factors down to the plan's reducing gap, or
    /// with `prefersFastScaling` the final size, as `dwebp -scale` does) and the core's resampler
    /// finishes, so the full-size image never exists. Images with alpha are decoded at full size: the core's resampler
    /// weights colours by alpha, libwebp's scaler does not.
    ///
    /// The corresponding libwebp functions are `WebPIDecode` and `WebPIUpdate`, checking
    /// cancellation between 64 KiB steps.
    static func decode(_ bytes: Data, width: Int, height: Int, layout: nukewebp_layout, context: ImageDecodingContext) throws(ImageCodecError) -> Bitmap {
        let full = ImageSize(width: width, height: height)
        // The core's driver resamples the rest of the way.
        if layout == NUKEWEBP_RGB, let reduction = context.nativeReduction(of: full, among: nativeReductions) {
            return try decode(bytes, size: reduction.size, scaled: true, layout: layout, allocator: context.allocator, context: context)
        }
        return try decode(bytes, size: full, scaled: false, layout: layout, allocator: context.allocator, context: context)
    }

    private static func decode(
        _ bytes: Data, size: ImageSize, scaled: Bool, layout: nukewebp_layout, allocator: PixelAllocator, context: ImageDecodingContext
    ) throws(ImageCodecError) -> Bitmap {
        let bytesPerPixel = layout == NUKEWEBP_RGB ? 3 : 4
        let format: PixelFormat = bytesPerPixel == 3 ? .rgb8 : .rgba8
        let alphaMode: AlphaMode = layout == NUKEWEBP_RGBA_PREMULTIPLIED ? .premultiplied : (bytesPerPixel == 3 ? .none : .straight)
        return try allocator.makeBitmap(width: size.width, height: size.height, pixelFormat: format, alphaMode: alphaMode) { (output) throws(ImageCodecError) in
            var diagnostics = nuke_diagnostics()
            // An image of a few megapixels decodes in one call (tens of milliseconds, and libwebp's
            // lossless decoder costs about 5% more in steps); a larger one in steps that ask the
            // request's cancellation.
            let stepped = size.width * size.height > Self.oneCallPixels
            let status = context.withShimCancellation { cancellation in bytes.withUnsafeBytes { raw in
                nukewebp_decode(
                    raw.bindMemory(to: UInt8.self).baseAddress!, raw.count, layout,
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self), size.width * bytesPerPixel, output.count,
                    scaled ? Int32(size.width) : 0, scaled ? Int32(size.height) : 0, stepped ? cancellation : nil, &diagnostics
                )
            } }
            guard status == NUKE_STATUS_OK else {
                throw WebPLibrary.error(status: status, diagnostics: diagnostics, context: "decoding the WebP image")
            }
        }
    }
}
