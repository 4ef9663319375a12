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
/// 3. NukePixels' resampler (`ImageResampler`: box reduction, then bicubic; `plan.finish(_:)`)
///    takes what the codec made to the final size, and the container reports ``ImageContainer/UserInfoKey/originalSizeKey``
///    and ``ImageContainer/UserInfoKey/decodeScaleKey``.
///
/// ```swift
/// if let plan = context.scalePlan(for: header.size) {
///     let scale = plan.smallestNative(among: 1...8) { n in outputSize(scale: n) } ?? 8
///     var bitmap = decode(scale: scale)
///     bitmap = plan.finish(bitmap)              // resampled to plan.finalSize
///     userInfo.merge(plan.userInfo(for: bitmap.size)) { $1 }
/// }
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
    public func allowsNative(_ size: ImageSize) -> Bool {
        size.width >= nativeFloor.width - 1 && size.height >= nativeFloor.height - 1
            && (size.width >= nativeFloor.width || size.height >= nativeFloor.height)
    }

    /// The option whose output is the smallest that covers the native floor, among a codec's
    /// reductions (in any order); `nil` when none does (decode at full size).
    ///
    /// - Parameters:
    ///   - options: What the codec can do (scale numerators, thumbnails, factors).
    ///   - size: The size each option produces, as the codec rounds it.
    public func smallestNative<Options: Sequence, E: Error>(
        among options: Options, size: (Options.Element) throws(E) -> ImageSize
    ) throws(E) -> Options.Element? {
        var best: (Options.Element, Int)?
        for option in options {
            let produced = try size(option)
            guard allowsNative(produced) else { continue }
            let pixels = produced.width * produced.height
            if best == nil || pixels < best!.1 { best = (option, pixels) }
        }
        return best?.0
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
