#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CWebPShim
import NukeCore
import NukePluginKit
import NukePixels

/// Decodes a WebP as its bytes arrive, at a total cost linear in the file size.
///
/// A still image goes through one libwebp incremental decoder (`WebPIDecoder`) kept for the whole
/// decode and given only the new bytes; it writes rows straight into the bitmap's storage, and
/// a preview (sharing that storage, copied only if the caller still holds it when more rows
/// come) is reported whenever new rows are complete. An animated file gives a preview per
/// completed frame, composited by the core. ``WebPContainer`` reads the RIFF chunks once.
///
/// When all the bytes are there from the start (``finish()`` before the first ``next()``), a
/// still image is decoded in one `WebPDecode` call instead, and a target size can use libwebp's
/// scaler for the integer reduction that precedes the core's resampler.
///
/// Contract: ``push(_:)`` appends only bytes not given before; ``finish()`` says no more come;
/// ``next()`` reports the next event.
final class WebPIncrementalDecoder: InputKeepingDecoder {
    typealias Event = ImageDecodingEvent

    /// The image as the header describes it.
    private struct Canvas {
        var width: Int
        var height: Int
        var hasAlpha: Bool
        var size: ImageSize { ImageSize(width: width, height: height) }
    }

    /// The decode request: limits, allocator, alpha, target size and plan, cancellation.
    private let context: ImageDecodingContext
    /// Every byte pushed (a first push of a whole `Data` shares its storage), whether the input
    /// is finished, whether previews are wanted.
    var input = IncrementalInput()
    var bytes: Data { input.bytes }
    private var container = WebPContainer()
    private var canvas: Canvas?

    // A still image decoded incrementally.
    private var handle: WebPDecoderHandle?
    private var pixels: Bitmap?
    private var bytesFed = 0
    private var rowsShown = 0
    private var stillIsDecoded = false

    // An animation.
    private var compositor: AnimationCompositor?
    private var framesComposited = 0
    private var firstCanvas: Bitmap?

    init(context: ImageDecodingContext) {
        self.context = context
    }

    private var layout: nukewebp_layout {
        guard canvas?.hasAlpha ?? true else { return NUKEWEBP_RGB }
        return context.prefersPremultipliedAlpha ? NUKEWEBP_RGBA_PREMULTIPLIED : NUKEWEBP_RGBA
    }

    /// The next event.
    ///
    /// - Throws: ``ImageCodecError``: `.corrupt`, `.unsupported`, `.incomplete` (after
    ///   ``finish()``), `.limitExceeded`, `.cancelled`.
    func next() throws(ImageCodecError) -> Event {
        try container.scan(bytes, limits: context.limits)
        guard let canvas else {
            guard let found = try readCanvas() else {
                if input.isFinished { throw WebPLibrary.error(.incomplete, .header, "the WebP data ends inside its header (\(bytes.count) bytes)") }
                return .needsMoreData
            }
            canvas = found
            return .header(ImageHeader(
                type: .webp, width: found.width, height: found.height, bitDepth: 8,
                componentCount: found.hasAlpha ? 4 : 3, hasAlpha: found.hasAlpha, isAnimated: container.isAnimated
            ))
        }
        return container.isAnimated ? try nextFrame(canvas) : try nextStill(canvas)
    }

    // MARK: - Header

    /// The canvas from `VP8X`, or the bitstream's size and alpha for a simple file; `nil` until
    /// the bytes hold it. Checks the limits.
    private func readCanvas() throws(ImageCodecError) -> Canvas? {
        let found: Canvas
        if let extended = container.extended, extended.hasAnimation {
            found = Canvas(width: extended.canvasWidth, height: extended.canvasHeight, hasAlpha: true)
        } else {
            guard bytes.count >= 12 else { return nil }
            guard WebPContainer.hasSignature(bytes) else {
                throw WebPLibrary.error(.corrupt, .header, "the data does not start with a RIFF WEBP header")
            }
            var features = nukewebp_features()
            var diagnostics = nuke_diagnostics()
            let status = bytes.withUnsafeBytes { raw in
                nukewebp_get_features(raw.bindMemory(to: UInt8.self).baseAddress!, raw.count, &features, &diagnostics)
            }
            if status == NUKE_STATUS_NEED_MORE { return nil }
            guard status == NUKE_STATUS_OK else {
                throw WebPLibrary.error(status: status, diagnostics: diagnostics, stage: .header, context: "reading the WebP header")
            }
            found = Canvas(width: Int(features.width), height: Int(features.height), hasAlpha: features.has_alpha != 0)
        }
        let bytesPerPixel = found.hasAlpha ? 4 : 3
        try context.limits.check(
            width: found.width, height: found.height, bytesPerPixel: bytesPerPixel, format: .webp, codec: WebPLibrary.codecName,
            inputByteCount: input.isFinished ? bytes.count : nil
        )
        if container.isAnimated {
            let needed = ImageAnimation.iteratorBytes(canvasSize: ImageSize(width: found.width, height: found.height), largestFrameBytes: found.width * found.height * 4)
            guard let needed, needed <= context.limits.maxDecodedBytes else {
                throw WebPLibrary.error(.limitExceeded, .header, "compositing frames on a \(found.width)×\(found.height) canvas needs more than the maximum \(context.limits.maxDecodedBytes) bytes")
            }
        }
        return found
    }

    // MARK: - Still images

    private func nextStill(_ canvas: Canvas) throws(ImageCodecError) -> Event {
        guard container.imageStart != nil else {
            if container.isComplete { throw WebPLibrary.error(.corrupt, "the WebP file has no image chunk") }
            if input.isFinished { throw WebPLibrary.error(.incomplete, "the WebP data ends after \(bytes.count) bytes, before its image") }
            return .needsMoreData
        }
        if handle == nil, !stillIsDecoded, input.isFinished {
            // Every byte is here before any was decoded: one call.
            return .final(try finalStill(try WebPStillDecoding.decode(bytes, width: canvas.width, height: canvas.height, layout: layout, context: context)))
        }
        if handle == nil, !input.wantsPreviews {
            // A file read in pieces without previews: libwebp would copy the bytes anyway, so keep
            // them and decode in one call at the end, where a target size lets libwebp's scaler
            // avoid the full-size image.
            return .needsMoreData
        }
        if !stillIsDecoded {
            try feed(canvas)
        }
        if stillIsDecoded, let pixels, container.isComplete || input.isFinished {
            // Metadata (EXIF, XMP) follows the image in the file: wait for it, or for the end.
            let container = try finalStill(pixels)
            return .final(container)
        }
        if input.isFinished {
            throw WebPLibrary.error(.incomplete, "the WebP data ends after \(bytes.count) bytes, inside the image (\(rowsShown) of \(canvas.height) rows decoded)")
        }
        if input.wantsPreviews, let pixels, !stillIsDecoded, let rows = handle?.rows, rows > rowsShown {
            rowsShown = rows
            // Shares the storage: the next feed copies it only if the caller still holds it.
            let userInfo: [ImageContainer.UserInfoKey: any Sendable] = [
                .rowCountKey: rows, .bytesConsumedKey: bytes.count, .isProgressiveKey: false,
            ]
            return .preview(ImageContainer(image: Image(bitmap: pixels), type: .webp, isPreview: true, userInfo: userInfo))
        }
        return .needsMoreData
    }

    /// Gives libwebp the bytes it has not seen, decoding into `pixels`.
    private func feed(_ canvas: Canvas) throws(ImageCodecError) {
        guard bytesFed < bytes.count else { return }
        let layout = self.layout
        let bytesPerPixel = layout == NUKEWEBP_RGB ? 3 : 4
        if handle == nil {
            let format: PixelFormat = bytesPerPixel == 3 ? .rgb8 : .rgba8
            let alphaMode: AlphaMode = layout == NUKEWEBP_RGBA_PREMULTIPLIED ? .premultiplied : (bytesPerPixel == 3 ? .none : .straight)
            // Zeroed: a preview shows the rows below the decoded ones as transparent black.
            pixels = try context.allocator.makeBitmap(width: canvas.width, height: canvas.height, pixelFormat: format, alphaMode: alphaMode, zeroed: true)
            handle = try WebPDecoderHandle(layout: layout, width: canvas.width, height: canvas.height, stride: canvas.width * bytesPerPixel)
        }
        guard let handle, var bitmap = pixels else { return }
        pixels = nil  // so that the bitmap is uniquely referenced unless a preview holds it
        let start = bytesFed
        let appended = bytes.withUnsafeBytes { raw in
            let chunk = UnsafeRawBufferPointer(rebasing: raw[start...])
            return bitmap.withUnsafeMutableBytes { output in
                Result { () throws(ImageCodecError) -> Bool in try handle.append(chunk, into: output) }
            }
        }
        pixels = bitmap
        let done = try appended.get()
        bytesFed = bytes.count
        stillIsDecoded = done
        if context.isCancelled { throw WebPLibrary.error(.cancelled, "cancelled") }
    }

    private func finalStill(_ bitmap: Bitmap) throws(ImageCodecError) -> ImageContainer {
        // The core's driver finishes what libwebp's scaler left (or the whole reduction) from the
        // stored size, the canvas of the header event.
        let userInfo: [ImageContainer.UserInfoKey: any Sendable] = [.isProgressiveKey: false]
        handle = nil
        pixels = nil
        return ImageContainer(image: makeImage(bitmap), type: .webp, isPreview: false, userInfo: userInfo)
    }

    /// The image with the file's metadata: ICC profile, EXIF (and its orientation), XMP.
    private func makeImage(_ bitmap: Bitmap) -> Image {
        var image = Image(bitmap: bitmap, exif: container.exif)
        image.colorInfo.iccProfile = container.icc
        image.xmp = container.xmp
        if let exif = container.exif, let orientation = ImageOrientation(exif: exif) {
            image.orientation = orientation
        }
        return image
    }

    // MARK: - Animations

    private func nextFrame(_ canvas: Canvas) throws(ImageCodecError) -> Event {
        let frames = container.frames
        let allPreviewed = framesComposited == frames.count
        if input.isFinished || (container.isComplete && (allPreviewed || !input.wantsPreviews)) {
            return .final(try finalAnimation(canvas))
        }
        if input.wantsPreviews, framesComposited < frames.count {
            let composited = try compositeNextFrame(canvas)
            let userInfo: [ImageContainer.UserInfoKey: any Sendable] = [
                .scanNumberKey: framesComposited, .frameCountKey: framesComposited, .bytesConsumedKey: bytes.count,
            ]
            return .preview(ImageContainer(image: makeImage(composited), type: .webp, isPreview: true, userInfo: userInfo))
        }
        return .needsMoreData
    }

    private func compositeNextFrame(_ canvas: Canvas) throws(ImageCodecError) -> Bitmap {
        let index = framesComposited
        let frame = container.frames[index]
        let pixels = try WebPFrameDecoder.decode(frame, index: index, in: bytes, cancellation: context.cancellationToken)
        if compositor == nil { compositor = AnimationCompositor(width: canvas.width, height: canvas.height) }
        let drawn = compositor!.draw(pixels, info: frame.info)
        if index == 0 { firstCanvas = drawn }
        framesComposited += 1
        return drawn
    }

    private func finalAnimation(_ canvas: Canvas) throws(ImageCodecError) -> ImageContainer {
        let frames = container.frames
        guard container.isComplete else {
            throw WebPLibrary.error(.incomplete, "the WebP data ends after \(bytes.count) bytes of \(container.riffEnd ?? 0), after \(frames.count) complete frames")
        }
        guard !frames.isEmpty else { throw WebPLibrary.error(.corrupt, "the animated WebP has no frame") }
        let first: Bitmap
        if let firstCanvas { first = firstCanvas } else { first = try compositeNextFrame(canvas) }
        // The core's driver finishes a decode to size of the first frame (and its loop count,
        // duration and frame count from the animation), and premultiplies.
        let userInfo: [ImageContainer.UserInfoKey: any Sendable] = [.isProgressiveKey: false]
        let image = makeImage(first)
        let bytes = self.bytes
        let cancellation = context.cancellation
        let animation = ImageAnimation(
            canvasSize: canvas.size,
            loopCount: container.loopCount ?? 0,
            frameInfos: frames.map(\.info),
            backgroundColor: container.backgroundColor,
            type: .webp,
            codec: WebPLibrary.codecName,
            makeDecoder: { () throws(ImageCodecError) -> any AnimationFrameDecoding in
                WebPFrameDecoder(bytes: bytes, frames: frames, cancellation: cancellation)
            }
        )
        let result = ImageContainer(image: image, type: .webp, isPreview: false, userInfo: userInfo, animation: animation)
        compositor = nil
        return result
    }
}
