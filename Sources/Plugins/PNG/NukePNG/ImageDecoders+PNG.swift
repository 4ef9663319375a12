#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import Synchronization

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
    /// native-endian `UInt16` when the context ``ImageDecodingContext/prefersHighBitDepth``.
    /// Alpha is straight. The image carries the file's ICC profile (`iCCP`), gamma (`gAMA`),
    /// sRGB rendering intent (`sRGB`) and EXIF block (`eXIf`) with its orientation; other
    /// ancillary chunks (text, including zTXt) are skipped without being decompressed.
    ///
    /// Progressive decoding: ``decodePartiallyDownloadedData(_:)`` feeds libpng only the
    /// bytes it has not seen. An interlaced file yields a preview per newly completed Adam7
    /// pass (``ImageContainer/UserInfoKey/scanNumberKey`` = passes complete, 1...7), each
    /// pixel's Adam7 block filled with the pass's pixel; a non-interlaced file yields a
    /// preview whenever new rows arrived (``ImageContainer/UserInfoKey/rowCountKey``), the
    /// rows below being zero. ``decode(_:)`` on the same instance feeds the rest; the result
    /// equals a one-shot decode.
    ///
    /// Errors: data that ends before `IEND` is `.incomplete` (even when every row arrived);
    /// libpng's errors (bad CRC, bad zlib data, bad IHDR) are `.corrupt` with libpng's
    /// message; the ``ImageLimits`` are checked when the first `IDAT` starts, before the
    /// pixels are allocated.
    ///
    /// The corresponding libpng function is `png_process_data`.
    public final class PNG: ImageDecoderRegistering, Sendable {
        private let adapter: IncrementalDecoderAdapter

        /// Creates a decoder.
        ///
        /// - Parameters:
        ///   - prefersHighBitDepth: Keep 16-bit samples instead of scaling them to 8 bits.
        ///   - limits: Bounds checked before the pixels are allocated.
        ///   - cancellation: Checked between 64 KiB slices of input.
        public init(
            prefersHighBitDepth: Bool = false,
            limits: ImageLimits = .default,
            cancellation: ImageDecodingCancellation? = nil
        ) {
            let context = ImageDecodingContext(data: Data(), prefersHighBitDepth: prefersHighBitDepth, limits: limits, cancellation: cancellation)
            adapter = IncrementalDecoderAdapter { PNGIncrementalDecoder(context: context) }
        }

        /// Creates a decoder with the context's options, limits, cancellation and allocator.
        public init(context: ImageDecodingContext) {
            adapter = IncrementalDecoderAdapter { PNGIncrementalDecoder(context: context) }
        }

        /// Creates a decoder for complete data, or returns `nil` when it is not a PNG.
        public convenience init?(data: Data, context: ImageDecodingContext) {
            guard Self.isPNG(data) else { return nil }
            self.init(context: context)
        }

        /// Creates a decoder for a download in progress, or returns `nil` when it is not a PNG
        /// (or fewer than 8 bytes arrived).
        public convenience init?(partiallyDownloadedData data: Data, context: ImageDecodingContext) {
            guard Self.isPNG(data) else { return nil }
            self.init(context: context)
        }

        /// `true` when `data` starts with the PNG signature.
        static func isPNG(_ data: Data) -> Bool {
            data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        }

        /// Decodes the complete image, feeding libpng only what earlier partial calls did not.
        ///
        /// - Throws: ``ImageCodecError``: `.incomplete` when the data ends before `IEND`,
        ///   `.corrupt` with libpng's message, `.limitExceeded`, `.cancelled`.
        ///
        /// The corresponding libpng function is `png_process_data`.
        public func decode(_ data: Data) throws -> ImageContainer {
            try adapter.decode(data)
        }

        /// Returns a preview when new rows (or a new Adam7 pass) arrived, otherwise `nil`.
        ///
        /// An interlaced image gets one preview per pass: when one chunk completes several,
        /// calling again with the same data returns the next (``ImageDecodingSession`` does).
        /// Passes that end within the same few bytes of input (the early passes of very small
        /// images, which libpng decodes in one go) share one preview, numbered with the last.
        /// An error ends the decode: this returns `nil` and the following ``decode(_:)`` throws it.
        ///
        /// The corresponding libpng function is `png_process_data`.
        public func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
            adapter.decodePartiallyDownloadedData(data)
        }
    }
}

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
            while apngScanOffset + 8 <= raw.count {
                let o = apngScanOffset
                let length = Int(raw[o]) << 24 | Int(raw[o + 1]) << 16 | Int(raw[o + 2]) << 8 | Int(raw[o + 3])
                let type = (raw[o + 4], raw[o + 5], raw[o + 6], raw[o + 7])
                if type == (0x61, 0x63, 0x54, 0x4C) {   // acTL
                    isAnimated = true
                    apngDecided = true
                    return
                }
                if type == (0x49, 0x44, 0x41, 0x54) || length > Int(Int32.max) {   // IDAT, or garbage
                    apngDecided = true
                    return
                }
                apngScanOffset = o + 12 + length
            }
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
                             format: .png, codec: LibPNG.codecName)
            guard structure.frames.count <= limits.maxFrameCount else {
                throw ImageCodecError(.limitExceeded, stage: .header, format: .png, codec: LibPNG.codecName,
                                      message: "\(structure.frames.count) frames exceed the maximum frame count \(limits.maxFrameCount)")
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
                type: .png, codec: LibPNG.codecName,
                makeDecoder: { () throws(ImageCodecError) -> any AnimationFrameDecoding in
                    APNGFrameDecoder(structure: structure, file: file, configuration: configuration, firstFrame: firstFrame)
                }
            )
            var first = try composited ?? animation.frame(at: 0).canvas
            if let plan = configuration.scalePlan(for: ImageSize(width: first.width, height: first.height)) {
                first = plan.finish(first)
                container.userInfo.merge(plan.userInfo(for: ImageSize(width: first.width, height: first.height))) { $1 }
            }
            container.image.bitmap = first
            container.image.loopCount = structure.loopCount
            container.image.frames[0].duration = structure.frames[0].info.duration
            container.animation = animation
            container.userInfo[.frameCountKey] = structure.frames.count
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
