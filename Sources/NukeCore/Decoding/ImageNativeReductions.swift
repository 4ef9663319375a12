/// The reductions a codec can make on its own while it decodes, declared by its plugin
/// (``ImageCodecInfo/nativeReductions``): for a decode to size the core picks one by its plan
/// (``ImageDecodingContext/nativeReduction(of:among:embedded:)``), the codec decodes at it, and the core's
/// resampler finishes. (Its values are plain numbers: the registry copies codec descriptions on
/// every dispatch.)
public enum ImageNativeReductions: Sendable, Hashable, CustomStringConvertible {
    /// `n / denominator` of the size for each `n` in the range, rounded up (JPEG's DCT scaling:
    /// `1...8` of 8). The chosen fraction is reported in
    /// ``ImageContainer/UserInfoKey/nativeScaleKey``, so the final size is mapped onto the part
    /// of the reduction that covers the image.
    case fractions(ClosedRange<Int>, of: Int)
    /// Any size, by a scaler inside the codec (libwebp's) that is faster but softer than the core's
    /// resampler: with ``ImageDecodingContext/prefersFastScaling`` straight to the final size;
    /// otherwise the image divided by whole factors (each side its own, rounded up), at least
    /// `minimumFactor`, the largest that still covers the plan's native floor.
    case scaler(minimumFactor: Int)
    /// Smaller copies the file carries (HEIF's thumbnails), at sizes known once the file is open:
    /// the plugin passes them when it asks (``ImageDecodingContext/nativeReduction(of:among:embedded:)``).
    /// Only copies of the image's shape count.
    case embedded

    public var description: String {
        switch self {
        case let .fractions(range, denominator): "\(range.lowerBound)/\(denominator)…\(range.upperBound)/\(denominator)"
        case let .scaler(minimum): "scaler (÷\(minimum) or more)"
        case .embedded: "embedded thumbnails"
        }
    }
}

/// The reduction the core chose for one decode to size (``ImageDecodingContext/nativeReduction(of:among:embedded:)``).
public struct ImageNativeReduction: Sendable, Hashable {
    /// The size the codec is to produce.
    public var size: ImageSize
    /// The numerator (``ImageNativeReductions/fractions(_:of:)``) or the index among the embedded
    /// sizes (``ImageNativeReductions/embedded``); `nil` for a scaler.
    public var option: Int?
    /// The image's size as stored.
    public var originalSize: ImageSize
    /// The fraction of a reduction that rounds sizes up.
    public var scale: Double?

    /// What the decode's container reports for the core's finish: the stored size and, for a
    /// fraction, its scale (merge it into the container's `userInfo`).
    public var userInfo: [ImageContainer.UserInfoKey: any Sendable] {
        var info: [ImageContainer.UserInfoKey: any Sendable] = [.originalSizeKey: originalSize]
        if let scale { info[.nativeScaleKey] = scale }
        return info
    }
}

extension ImageDecodingContext {
    /// The reduction the codec is to decode an image of `originalSize` at, among those it
    /// declares, for the plan of this decode to size (``scalePlan(for:)``): the smallest that
    /// still covers the plan's native floor; `nil` when there is no target size, the target does
    /// not reduce the image, or no reduction covers the floor (decode at full size).
    ///
    /// - Parameters:
    ///   - originalSize: The image's size as stored.
    ///   - reductions: What the codec declares.
    ///   - sizes: For ``ImageNativeReductions/embedded``, the sizes of the copies the file carries.
    public func nativeReduction(of originalSize: ImageSize, among reductions: ImageNativeReductions, embedded sizes: [ImageSize] = []) -> ImageNativeReduction? {
        guard let plan = scalePlan(for: originalSize) else { return nil }
        let (width, height) = (originalSize.width, originalSize.height)
        switch reductions {
        case let .fractions(numerators, denominator):
            let size = { (n: Int) in ImageSize(width: (width * n + denominator - 1) / denominator, height: (height * n + denominator - 1) / denominator) }
            guard let n = plan.smallestNative(among: numerators.filter { $0 < denominator }, size: size) else { return nil }
            return ImageNativeReduction(size: size(n), option: n, originalSize: originalSize, scale: Double(n) / Double(denominator))
        case let .scaler(minimumFactor):
            if prefersFastScaling { return ImageNativeReduction(size: plan.finalSize, originalSize: originalSize) }
            let factors = (Int(Double(width) / Double(plan.finalSize.width) / plan.reducingGap),
                           Int(Double(height) / Double(plan.finalSize.height) / plan.reducingGap))
            guard min(factors.0, factors.1) >= max(minimumFactor, 2) else { return nil }
            let size = ImageSize(width: (width + factors.0 - 1) / factors.0, height: (height + factors.1 - 1) / factors.1)
            return ImageNativeReduction(size: size, originalSize: originalSize)
        case .embedded:
            let aspect = Double(width) / Double(height)
            let index = plan.smallestNative(among: sizes.indices.filter { index in
                sizes[index].width > 0 && sizes[index].height > 0 && sizes[index].width < width
                    && abs(Double(sizes[index].width) / Double(sizes[index].height) - aspect) < 0.02
            }, size: { sizes[$0] })
            return index.map { ImageNativeReduction(size: sizes[$0], option: $0, originalSize: originalSize) }
        }
    }
}
