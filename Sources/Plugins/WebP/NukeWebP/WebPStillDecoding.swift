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
    struct Result {
        var bitmap: Bitmap
        /// Set when the bitmap is already at the target size (libwebp's scaler, then the core's
        /// resampler): the target width over the image's.
        var scale: Double?
    }

    /// The smallest integer reduction for which libwebp's scaler is used before the core's
    /// resampler (measured with NukeBenchmarks' "WebP decode to size" rows: at ÷2 the scaler
    /// costs more than it saves).
    static let minimumScalerFactor = 2

    /// The largest output decoded in one `WebPDecode` call, without cancellation checks inside.
    static let oneCallPixels = 4 << 20

    /// Decodes the complete file in `bytes`.
    ///
    /// With the core's plan for a target size and no alpha, libwebp's scaler first shrinks the
    /// image by the integer factor Pillow's `reduce` step would use, down to the plan's reducing
    /// gap (the core's resampler finishes the job), so the full-size image never exists; with
    /// ``NukeCore/ImageDecodingContext/prefersFastScaling`` it goes straight to the final size (as
    /// `dwebp -scale` does). Images with alpha are decoded at full size: the core's resampler
    /// weights colours by alpha, libwebp's scaler does not.
    ///
    /// The corresponding libwebp functions are `WebPIDecode` and `WebPIUpdate`, checking
    /// cancellation between 64 KiB steps.
    static func decode(_ bytes: Data, width: Int, height: Int, layout: nukewebp_layout, context: ImageDecodingContext) throws(ImageCodecError) -> Result {
        let full = ImageSize(width: width, height: height)
        if let plan = context.scalePlan(for: full), layout == NUKEWEBP_RGB {
            let size = plan.finalSize
            if context.prefersFastScaling {
                let bitmap = try decode(bytes, size: size, scaled: true, layout: layout, allocator: context.allocator, context: context)
                return Result(bitmap: bitmap, scale: Double(size.width) / Double(width))
            }
            let fx = max(1, Int(Double(width) / Double(size.width) / plan.reducingGap))
            let fy = max(1, Int(Double(height) / Double(size.height) / plan.reducingGap))
            if min(fx, fy) >= minimumScalerFactor {
                let reduced = ImageSize(width: (width + fx - 1) / fx, height: (height + fy - 1) / fy)
                // The core's driver resamples the rest of the way.
                let bitmap = try decode(bytes, size: reduced, scaled: true, layout: layout, allocator: context.allocator, context: context)
                return Result(bitmap: bitmap, scale: Double(size.width) / Double(width))
            }
        }
        return Result(bitmap: try decode(bytes, size: full, scaled: false, layout: layout, allocator: context.allocator, context: context), scale: nil)
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
