import Synchronization

/// How a decode to a target size is made, planned once by the core from the target and the
/// image's size: every plugin follows the same rule.
///
/// The rule is Pillow's `thumbnail` (`reducing_gap = 2`):
/// 1. the **final size** fits or fills the target (``ImageDecodingContext/contentMode``), never
///    larger than the image;
/// 2. a codec's own reduction — JPEG's N/8 DCT scaling, libwebp's scaler, an embedded thumbnail,
///    an SVG's render size — may go down to any size that still covers the **native floor**: twice
///    the final size by default, so that the resampler that finishes has pixels to average (about
///    2–5 dB PSNR over reducing all the way on photographs), or the final size itself with
///    ``ImageDecodingContext/prefersFastScaling``;
/// 3. the resampler (NukePixels' `ImageResampler`: box reduction, then bicubic; ``finish(_:scale:)``)
///    takes what the codec made to the final size — the core's drivers do it, or an
///    ``ImageRowDestination`` as rows arrive — and the container reports
///    ``ImageContainer/UserInfoKey/originalSizeKey`` and ``ImageContainer/UserInfoKey/decodeScaleKey``.
///
/// A codec with reductions of its own declares them (``ImageNativeReductions``), decodes at the
/// one the core chooses, and reports it; the core finishes:
///
/// ```swift
/// let reduction = context.nativeReduction(of: header.size, among: .fractions(1...8, of: 8))
/// let bitmap = decode(scale: reduction?.option ?? 8)
/// if let reduction { userInfo.merge(reduction.userInfo) { $1 } }
/// ```
public struct ImageScalePlan: Sendable, Hashable {
    /// The image's size as stored.
    public let originalSize: ImageSize
    /// The size the decode returns.
    public let finalSize: ImageSize
    /// The smallest size a codec's own reduction may produce.
    public let nativeFloor: ImageSize
    /// How much larger than the final size a codec's reduction stops: 2, or 1 when fast.
    public let reducingGap: Double

    /// Pillow's `reducing_gap` for `thumbnail`.
    public static let defaultReducingGap = 2.0

    /// Plans a decode of an image of `originalSize` to `target`.
    public init(originalSize: ImageSize, target: ImageSize, contentMode: ImageDecodingContext.ContentMode, prefersFastScaling: Bool) {
        let final = originalSize.fitted(to: target, contentMode: contentMode)
        let gap = prefersFastScaling ? 1 : Self.defaultReducingGap
        self.originalSize = originalSize
        finalSize = final
        reducingGap = gap
        nativeFloor = ImageSize(width: min(originalSize.width, Int((Double(final.width) * gap).rounded(.up))),
                                height: min(originalSize.height, Int((Double(final.height) * gap).rounded(.up))))
    }

    /// `true` when the final size is smaller than the image.
    public var reduces: Bool { finalSize != originalSize }

    /// Whether a codec's reduction to `size` keeps enough pixels: both sides at least the
    /// floor's, give or take the pixel a codec's own rounding may cost (libjpeg rounds N/8 up).
    func allowsNative(_ size: ImageSize) -> Bool {
        size.width >= nativeFloor.width - 1 && size.height >= nativeFloor.height - 1
            && (size.width >= nativeFloor.width || size.height >= nativeFloor.height)
    }

    /// The option whose output is the smallest that covers the native floor, among a codec's
    /// reductions; `nil` when none does (decode at full size). `size`: what each option produces.
    func smallestNative(among options: [Int], size: (Int) -> ImageSize) -> Int? {
        options.filter { allowsNative(size($0)) }.min { size($0).width * size($0).height < size($1).width * size($1).height }
    }

    /// What a decode to size reports for the image it returns (`size`): the original size and the
    /// scale of the result.
    public func userInfo(for size: ImageSize) -> [ImageContainer.UserInfoKey: any Sendable] {
        [.originalSizeKey: originalSize, .decodeScaleKey: Double(size.width) / Double(max(1, originalSize.width))]
    }
}

extension ImageDecodingContext {
    /// The plan for decoding an image of `originalSize` to ``targetSize``; `nil` without a target
    /// size or when the target does not reduce the image.
    public func scalePlan(for originalSize: ImageSize) -> ImageScalePlan? {
        guard let targetSize, originalSize.width > 0, originalSize.height > 0 else { return nil }
        let plan = ImageScalePlan(originalSize: originalSize, target: targetSize, contentMode: contentMode, prefersFastScaling: prefersFastScaling)
        return plan.reduces ? plan : nil
    }
}

extension ImageScalePlan {
    /// `bitmap` — the image, or a codec's reduction of it — resampled to the final size by the
    /// announced resampler (``ImageResizing``, else the core's area average); itself when it is
    /// that size already, or a pixel short of it on one side (a codec's rounding: nothing is enlarged).
    ///
    /// - Parameters:
    ///   - bitmap: The decoded image, at the codec's reduction or full size.
    ///   - scale: The codec's reduction, when it rounds the size up (JPEG's N/8: the bitmap covers
    ///     `originalSize` × `scale` of its pixels, the last row or column only in part); the
    ///     resampler maps the final size onto that box, as Pillow's `thumbnail` does.
    public func finish(_ bitmap: Bitmap, scale: Double? = nil) -> Bitmap {
        guard bitmap.width > finalSize.width || bitmap.height > finalSize.height,
              bitmap.width >= finalSize.width, bitmap.height >= finalSize.height else { return bitmap }
        return ImageResizing.resolved(bitmap, finalSize, scale.map(sourceExtent))
    }

    /// The part of a codec's reduction by `scale` that covers the image, in the reduction's own
    /// pixels (`originalSize` × `scale`): what the resampler maps the final size onto.
    public func sourceExtent(scale: Double) -> (width: Double, height: Double) {
        (Double(originalSize.width) * scale, Double(originalSize.height) * scale)
    }
}

/// The resampler that finishes every decode to size (``ImageScalePlan/finish(_:scale:)``), and
/// the one rows stream into as a decoder produces them (``ImageRowDestination``).
///
/// NukePixels announces its own (box reduction, then bicubic) from the `nuke_codecs` section, so
/// any app that links a codec product has it; an app with NukeCore alone and decoders of its own
/// gets the core's area average, so that a decoder that ignores the target size is still
/// finished to the planned size.
public enum ImageResizing {
    /// Resamples a bitmap to a smaller size; `sourceExtent` is how much of the image it covers,
    /// in its own pixels, when a codec's reduction rounded its size up.
    public typealias Resize = @Sendable (_ bitmap: Bitmap, _ size: ImageSize, _ sourceExtent: (width: Double, height: Double)?) -> Bitmap
    /// Makes a resampler from rows of `source` pixels in `pixelFormat` to `size`, taking the rows
    /// top to bottom as they are decoded.
    public typealias MakeRowResampler = @Sendable (
        _ source: ImageSize, _ pixelFormat: PixelFormat, _ alphaMode: AlphaMode, _ size: ImageSize,
        _ sourceExtent: (width: Double, height: Double)?
    ) -> any ImageRowResampling

    /// The announced resampler, once the linked products' records have run.
    public static var current: Resize? {
        _ = ImageCodecs.linked   // runs the products' records, NukePixels' among them
        return installed.withLock { $0?.resize }
    }

    /// The announced resampler, else the core's area average.
    static let resolved: Resize = { bitmap, size, extent in
        if let announced = current { return announced(bitmap, size, extent) }
        return AreaResampler.resize(bitmap, to: size, sourceExtent: extent)
    }

    /// The announced row resampler, once the linked products' records have run.
    public static var currentRowResampler: MakeRowResampler? {
        _ = ImageCodecs.linked
        return installed.withLock { $0?.rows }
    }

    /// Sets the resamplers, unless they are set already (the first record wins).
    public static func announce(_ resize: @escaping Resize, rows: @escaping MakeRowResampler) {
        installed.withLock { if $0 == nil { $0 = Resamplers(resize: resize, rows: rows) } }
    }

    /// The two closures in a struct of their own, not a tuple: a tuple of closures is the
    /// `Mutex`'s generic value, stored at maximal abstraction, and reading an element through the
    /// `inout` of `withLock` wrote it back wrapped in two more reabstraction thunks, so every read
    /// lengthened the chain a call runs through until a long-lived process overflowed its stack
    /// (found by the bmp fuzz target after about 2,000 decodes to size).
    private struct Resamplers {
        let resize: Resize
        let rows: MakeRowResampler
    }

    private static let installed = Mutex<Resamplers?>(nil)
}

/// A resampler that takes an image's rows top to bottom as they are decoded and holds only the
/// window it needs (``ImageResizing/currentRowResampler``).
public protocol ImageRowResampling: AnyObject {
    /// Takes the next `count` rows, `bytesPerRow` apart.
    func push(rows: UnsafeRawBufferPointer, count: Int, bytesPerRow: Int)
    /// The resampled image, once every row was pushed.
    func finish() -> Bitmap
}

extension ImageContainer {
    /// The core's finish of a decode to size, for every decoder it drives: each frame larger than
    /// the plan for the image's size resampled to the final size, and the plan's
    /// ``ImageContainer/UserInfoKey/originalSizeKey`` and ``ImageContainer/UserInfoKey/decodeScaleKey``
    /// reported. The image's size is the decoder's `originalSizeKey`, else `originalSize` (its
    /// header's), else the bitmap's; a codec's rounded reduction is mapped by its
    /// ``ImageContainer/UserInfoKey/nativeScaleKey``. An empty image (rows sent to a sink) is left alone.
    public mutating func finishDecodeToSize(for context: ImageDecodingContext, originalSize: ImageSize? = nil) {
        let bitmap = image.bitmap
        guard bitmap.width > 0, bitmap.height > 0 else { return }
        let original = (userInfo[.originalSizeKey] as? ImageSize) ?? originalSize ?? ImageSize(width: bitmap.width, height: bitmap.height)
        guard let plan = context.scalePlan(for: original) else { return }
        let scale = userInfo[.nativeScaleKey] as? Double
        for index in image.frames.indices {
            image.frames[index].bitmap = plan.finish(image.frames[index].bitmap, scale: scale)
        }
        let result = image.bitmap
        userInfo.merge(plan.userInfo(for: ImageSize(width: result.width, height: result.height))) { $1 }
    }
}
