#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePixels
import NukePluginKit

/// The incremental PNG decoder NukeCore drives: new bytes in, a preview per Adam7 pass or per
/// batch of new rows, then the final image (as soon as libpng sees `IEND`).
final class PNGIncrementalDecoder: IncrementalImageDecoding {
    private let configuration: ImageDecodingContext
    private var session: PNGDecodingSession?
    /// Bytes received that libpng has not been given yet (it stops at each completed pass).
    private var unfed = Data()
    private var isFinished = false
    private var isDone = false
    private var wantsPreviews = true
    /// APNG: the chunks before the first IDAT are watched for `acTL`; an animated file's bytes
    /// are kept (its frames are decoded from them on demand), a still file's are not.
    private var apngBytes = Data()
    private var apngScanOffset = 8
    private var apngDecided = false
    private var isAnimated = false

    init(context: ImageDecodingContext) {
        self.configuration = context
    }

    func push(_ bytes: Data) {
        precondition(!isFinished, "push(_:) after finish()")
        if unfed.isEmpty { unfed = bytes } else { unfed.append(bytes) }
        if !apngDecided || isAnimated {
            if apngBytes.isEmpty { apngBytes = bytes } else { apngBytes.append(bytes) }
            if !apngDecided { scanForAnimation() }
        }
    }

    /// Walks the chunk headers received so far until `acTL` (animated) or `IDAT` (not).
    private func scanForAnimation() {
        apngBytes.withUnsafeBytes { raw in
            var chunks = PNGChunks(ImageHeader.Reader(raw.bindMemory(to: UInt8.self)), from: apngScanOffset)
            while let chunk = chunks.next() {
                if chunk.is("acTL") {
                    isAnimated = true
                    apngDecided = true
                    return
                }
                if chunk.is("IDAT") {
                    apngDecided = true
                    return
                }
            }
            apngScanOffset = chunks.position
            if chunks.isBroken { apngDecided = true }   // garbage: libpng reports it
        }
        if apngDecided, !isAnimated { apngBytes = Data() }
    }

    /// The final container, with the animation of an APNG file: frames decoded on demand,
    /// composited by the core; the container's image is frame 0, composited. A file whose APNG
    /// chunks are broken shows its default image, as browsers do, with a warning.
    private func finalContainer(_ container: ImageContainer) throws -> ImageContainer {
        if apngDecided, !isAnimated { return container }
        if !apngDecided { scanForAnimation() }
        guard isAnimated else { return container }
        var container = container
        switch APNGStructure.parse(apngBytes) {
        case .notAnimated:
            return container
        case .broken(let reason):
            container.userInfo[.warningsKey] = ImageDecodingWarnings(count: 1, first: "APNG: \(reason); showing the default image")
            return container
        case .animated(let structure):
            let limits = configuration.limits
            try limits.check(width: structure.width, height: structure.height, bytesPerPixel: 4,
                             format: .png, codec: PNGLibrary.codecName)
            guard structure.frames.count <= limits.maxFrameCount else {
                throw PNGLibrary.error(.limitExceeded, .header, "\(structure.frames.count) frames exceed the maximum frame count \(limits.maxFrameCount)")
            }
            let file = apngBytes
            let configuration = configuration
            // When the default image is frame 0 (covering the canvas, as the format requires) and
            // was decoded at full size here, frame 0 is not decoded again for the container's
            // image. When compositing leaves it unchanged (no transparent pixel over the empty
            // canvas), the animation also keeps it, sharing the container image's pixels, and
            // playing from the start does not decode it again: no memory beyond the image's own.
            let zero = structure.frames[0].info
            let decodedFirst = structure.defaultImageIsFirstFrame && configuration.targetSize == nil
                && zero.x == 0 && zero.y == 0 && zero.width == structure.width && zero.height == structure.height
                && container.image.bitmap.width == structure.width && container.image.bitmap.height == structure.height
            // `seed`: what the animation keeps of frame 0; `composited`: the container's image.
            var seed: Bitmap?
            var composited: Bitmap?
            if decodedFirst {
                let pixels = APNGFrameDecoder.framePixels(container.image.bitmap)
                var compositor = AnimationCompositor(width: structure.width, height: structure.height)
                let canvas = compositor.draw(pixels, info: zero)
                seed = canvas == pixels ? pixels : nil
                composited = seed ?? canvas
            }
            let firstFrame = seed
            let animation = ImageAnimation(
                canvasSize: ImageSize(width: structure.width, height: structure.height),
                loopCount: structure.loopCount,
                frameInfos: structure.frames.map(\.info),
                type: .png, codec: PNGLibrary.codecName,
                makeDecoder: { () throws(ImageCodecError) -> any AnimationFrameDecoding in
                    APNGFrameDecoder(structure: structure, file: file, configuration: configuration, firstFrame: firstFrame)
                }
            )
            // The core's driver finishes a decode to size of the first frame.
            container.image.bitmap = try composited ?? animation.frame(at: 0).canvas
            container.animation = animation
            return container
        }
    }

    func finish() {
        isFinished = true
    }

    /// Without previews the rows go straight to their final place (or, decoding to size, through
    /// the row ring into the resampler) as the bytes arrive.
    func setWantsPreviews(_ wantsPreviews: Bool) {
        self.wantsPreviews = wantsPreviews
    }

    func next() throws -> ImageDecodingEvent {
        precondition(!isDone, "next() after the final image or an error")
        do {
            let session = try self.session ?? PNGDecodingSession(configuration: configuration)
            self.session = session
            if isFinished {
                _ = try session.feed(unfed, forPreviews: false)
                unfed = Data()
                isDone = true
                return .final(try finalContainer(session.finish()))
            }
            let consumed = try session.feed(unfed, forPreviews: wantsPreviews)
            unfed = consumed == unfed.count ? Data() : unfed.dropFirst(consumed)
            if wantsPreviews, let preview = session.preview() { return .preview(preview) }
            if session.isFinished {
                isDone = true
                return .final(try finalContainer(session.finish()))
            }
            return .needsMoreData
        } catch {
            isDone = true
            throw error
        }
    }
}
