#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit
import NukePixels

/// Decodes a GIF as its bytes arrive: a preview per completed frame, then the final image,
/// at a total cost linear in the file size.
///
/// ``GIFScanner`` walks the blocks of each new chunk (cheap, resumable); giflib is called for a
/// frame only once all of its bytes are there, through one handle reading the growing buffer,
/// so nothing is parsed or decoded twice. The compositor keeps the canvas between frames.
///
/// Contract: ``push(_:)`` appends only bytes not given before; ``finish()`` says no more
/// come; ``next()`` reports the next event. After ``finish()``, ``next()`` returns `.final`
/// or throws (`.incomplete` for data that ends inside a block), never `.needsMoreData`.
final class GIFIncrementalDecoder: InputKeepingDecoder {
    typealias Event = ImageDecodingEvent

    /// The decode request: limits, strictness, target size and plan, cancellation.
    private let context: ImageDecodingContext
    private var limits: ImageLimits { context.limits }
    private var cancellation: ImageDecodingCancellation { context.cancellationToken }
    /// Every byte pushed (a first push of a whole `Data` shares its storage), whether the input
    /// is finished, whether previews are wanted.
    var input = IncrementalInput()
    var bytes: Data { input.bytes }
    private var scanner = GIFScanner()
    private var didReportHeader = false
    private var handle: GIFDecoderHandle?
    private var compositor: AnimationCompositor?
    /// Frames composited into previews so far.
    private(set) var framesComposited = 0
    private var firstCanvas: Bitmap?
    /// Frame 0's decoded pixels, while they may still be handed to the animation.
    private var firstPixels: Bitmap?

    init(context: ImageDecodingContext) {
        self.context = context
    }

    /// The next event.
    ///
    /// - Throws: ``ImageCodecError``: `.corrupt`, `.incomplete` (after ``finish()``),
    ///   `.limitExceeded`, `.cancelled`.
    func next() throws(ImageCodecError) -> Event {
        if !didReportHeader, bytes.count >= 10, bytes.starts(with: Array("GIF8".utf8)) {
            // Check the declared size before the global colour table arrives.
            let width = Int(bytes[6]) | Int(bytes[7]) << 8, height = Int(bytes[8]) | Int(bytes[9]) << 8
            try limits.check(width: width, height: height, bytesPerPixel: 4, format: .gif, codec: GIFLibrary.codecName)
        }
        try scanner.scan(bytes, limits: limits)
        guard let screen = scanner.screen else {
            if input.isFinished { throw GIFLibrary.error(.incomplete, .header, "the GIF data ends inside its header (\(bytes.count) bytes)") }
            return .needsMoreData
        }
        if !didReportHeader {
            // A zero-size screen fails here as corrupt, a huge one as limitExceeded.
            // With the whole input (a one-shot decode), also bound decoded bytes per input byte.
            try limits.check(
                width: screen.width, height: screen.height, bytesPerPixel: 4, format: .gif, codec: GIFLibrary.codecName,
                inputByteCount: input.isFinished ? bytes.count : nil
            )
            didReportHeader = true
            return .header(ImageHeader(type: .gif, width: screen.width, height: screen.height, bitDepth: 8, componentCount: 1))
        }
        // Before finish(), a trailer that arrived with the last frames still lets their previews out first.
        if input.isFinished || (scanner.isComplete && (framesComposited == scanner.frames.count || !input.wantsPreviews)) {
            if !scanner.isComplete, scanner.endsInsideRecord(count: bytes.count) {
                throw GIFLibrary.error(.incomplete, "the GIF data ends inside a block at offset \(scanner.position) of \(bytes.count), after \(scanner.frames.count) complete frames")
            }
            guard !scanner.frames.isEmpty else {
                if !scanner.isComplete {
                    throw GIFLibrary.error(.incomplete, "the GIF data ends after \(bytes.count) bytes, before its first image")
                }
                throw GIFLibrary.error(.corrupt, "the GIF has no image")
            }
            return .final(try makeFinal(screen: screen))
        }
        if input.wantsPreviews, framesComposited < scanner.frames.count {
            let canvas = try compositeNextFrame(screen: screen)
            var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [
                .scanNumberKey: framesComposited, .frameCountKey: framesComposited, .bytesConsumedKey: bytes.count,
            ]
            userInfo[.isProgressiveKey] = scanner.frames[0].isInterlaced
            return .preview(ImageContainer(image: Image(bitmap: canvas), type: .gif, isPreview: true, userInfo: userInfo))
        }
        return .needsMoreData
    }

    private func frameHandle() throws(ImageCodecError) -> GIFDecoderHandle {
        if let handle { return handle }
        let fresh = try GIFDecoderHandle()
        handle = fresh
        return fresh
    }

    /// Decodes and composites the next complete frame; returns the canvas.
    private func compositeNextFrame(screen: GIFScanner.Screen) throws(ImageCodecError) -> Bitmap {
        let index = framesComposited
        let frame = scanner.frames[index]
        let pixels = try frameHandle().decodeFrame(frame, index: index, in: bytes, cancellation: cancellation, allocator: context.allocator)
        if compositor == nil { compositor = AnimationCompositor(width: screen.width, height: screen.height) }
        let canvas = compositor!.draw(pixels, info: frame.info)
        if index == 0 {
            firstCanvas = canvas
            firstPixels = pixels
        }
        framesComposited += 1
        return canvas
    }

    private func makeFinal(screen: GIFScanner.Screen) throws(ImageCodecError) -> ImageContainer {
        let frames = scanner.frames
        let loopCount = scanner.loopCount ?? 1
        var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [.isProgressiveKey: frames[0].isInterlaced, .frameCountKey: frames.count]
        let full = ImageSize(width: screen.width, height: screen.height)
        // GIF has no reduction of its own: the core resamples the first frame.
        let shown: Bitmap
        // Frame 0's pixels, kept by the animation so that playing from the start does not decode it again.
        var seed: Bitmap?
        if ImageRowDestination.resamples(size: full, context: context), firstCanvas == nil {
            // Decode to size before any preview made a canvas: frame 0's rows go straight into
            // the core's destination, which resamples them, so the full-size canvas never exists.
            // A frame that covers the screen with no transparent index is opaque: its sums need
            // no weighting by alpha (the resampler's plain integer path). Unless its data ends
            // early, leaving transparent rows: then it is resampled again with alpha.
            let first = frames[0]
            let isOpaque = first.transparentIndex < 0 && first.left == 0 && first.top == 0
                && first.width == full.width && first.height == full.height
            func stream(_ alphaMode: AlphaMode, with handle: GIFDecoderHandle) throws(ImageCodecError) -> (Bitmap, rows: Int) {
                let destination = try ImageRowDestination(size: full, pixelFormat: .rgba8, alphaMode: alphaMode, context: context)
                let rows = try handle.streamFirstFrame(first, in: bytes, screen: full, into: destination, cancellation: cancellation)
                var bitmap = destination.finish().bitmap
                bitmap.alphaMode = .straight
                return (bitmap, rows)
            }
            var (bitmap, rows) = try stream(isOpaque ? .premultiplied : .straight, with: frameHandle())
            if isOpaque, rows < first.height {
                // A handle of its own, so that the frame's warnings are counted once.
                (bitmap, rows) = try stream(.straight, with: GIFDecoderHandle())
            }
            shown = bitmap
        } else {
            var first: Bitmap
            if let firstCanvas {
                first = firstCanvas
            } else {
                first = try compositeNextFrame(screen: screen)
            }
            // When compositing left frame 0 unchanged (it covers the screen with no transparent
            // pixel), the animation keeps those pixels, shared with the container's image;
            // otherwise it keeps nothing.
            if let firstPixels, firstPixels == first {
                first = firstPixels
                seed = firstPixels
            }
            // Decode to size after previews: the core's driver resamples the composited first frame.
            shown = first
        }
        // The core's driver finishes the decode to size from the stored size, the header event's.
        self.firstPixels = nil
        if let warnings = handle?.warnings { userInfo[.warningsKey] = warnings }
        var animation: ImageAnimation?
        if frames.count > 1 {
            let bytes = self.bytes
            let cancellation = self.cancellation
            let firstFrame = seed
            animation = ImageAnimation(
                canvasSize: ImageSize(width: screen.width, height: screen.height),
                loopCount: loopCount,
                frameInfos: frames.map(\.info),
                backgroundColor: screen.backgroundColor,
                type: .gif,
                codec: GIFLibrary.codecName,
                makeDecoder: { () throws(ImageCodecError) -> any AnimationFrameDecoding in
                    try GIFFrameDecoder(bytes: bytes, frames: frames, cancellation: cancellation, firstFrame: firstFrame)
                }
            )
        }
        return ImageContainer(image: Image(bitmap: shown), type: .gif, isPreview: false, userInfo: userInfo, animation: animation)
    }
}
