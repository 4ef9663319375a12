/// An animation whose frames are decoded on demand.
///
/// A decoder that finds an animation returns its first frame as the container's image and
/// this value as ``ImageContainer/animation``. Nothing else is decoded until asked:
///
/// ```swift
/// let container = try decoder.decode(data)
/// if let animation = container.animation {
///     let frames = try animation.makeIterator(memoryBudget: 64 << 20)
///     while let frame = try frames.next() {
///         show(frame.canvas, for: frame.info.browserDuration)
///     }
/// }
/// ```
///
/// Playing costs O(1) frames of work per frame and holds one canvas, one saved rectangle (for
/// frames disposed to previous) and one frame, whatever the length of the animation. Seeking
/// (`frame(at:)`, `AnimationFrameSequence/seek(to:)`) replays from the nearest frame that
/// ``AnimationFrameInfo/isIndependent``. `allFrames(limits:)` decodes everything eagerly, for
/// small animations, within the ``ImageLimits``.
///
/// The frames are composited by the core's `AnimationCompositor`; a plugin supplies an
/// ``AnimationFrameDecoding`` that decodes each frame's own rectangle.
public final class ImageAnimation: Sendable {
    /// The canvas (GIF logical screen, APNG `IHDR` size, WebP `ANIM` canvas).
    public let canvasSize: ImageSize
    /// How many times the animation plays: 0 means forever.
    public let loopCount: Int
    /// The background colour the file declares (RGBA), when the format has one. Browsers do not
    /// paint it: disposal to background clears to transparent.
    public let backgroundColor: [UInt8]?
    /// Every frame's info, in order; ``AnimationFrameInfo/isIndependent`` is set by the core.
    public let frameInfos: [AnimationFrameInfo]
    /// The format, for errors.
    public let type: ImageType?
    /// The codec, for errors.
    public let codec: String?
    private let makeDecoder: @Sendable () throws(ImageCodecError) -> any AnimationFrameDecoding

    /// Creates an animation.
    ///
    /// - Parameters:
    ///   - canvasSize: The canvas size.
    ///   - loopCount: 0 for forever.
    ///   - frameInfos: The frames' infos; their ``AnimationFrameInfo/isIndependent`` is
    ///     recomputed with ``independence(of:canvasWidth:canvasHeight:)``.
    ///   - backgroundColor: The declared background colour (RGBA), if any.
    ///   - type: The format.
    ///   - codec: The codec's description, for errors.
    ///   - makeDecoder: Makes a fresh frame decoder; called once per iterator.
    public init(
        canvasSize: ImageSize,
        loopCount: Int,
        frameInfos: [AnimationFrameInfo],
        backgroundColor: [UInt8]? = nil,
        type: ImageType? = nil,
        codec: String? = nil,
        makeDecoder: @escaping @Sendable () throws(ImageCodecError) -> any AnimationFrameDecoding
    ) {
        self.canvasSize = canvasSize
        self.loopCount = loopCount
        self.backgroundColor = backgroundColor
        let independent = Self.independence(of: frameInfos, canvasWidth: canvasSize.width, canvasHeight: canvasSize.height)
        self.frameInfos = zip(frameInfos, independent).map { info, isIndependent in
            var info = info
            info.isIndependent = isIndependent
            return info
        }
        self.type = type
        self.codec = codec
        self.makeDecoder = makeDecoder
    }

    /// The number of frames.
    public var frameCount: Int { frameInfos.count }

    /// The total stored duration of one loop, in seconds.
    public var duration: Double { frameInfos.reduce(0) { $0 + $1.duration } }

    /// Which frames are independent: the canvas after them depends on no earlier frame.
    ///
    /// Frame `i` is independent when
    /// - it is the first frame (the canvas starts transparent); or
    /// - the canvas before it is known to be transparent: frame `i − 1` is disposed to
    ///   background and its rectangle covers the canvas; or
    /// - it overwrites everything: its rectangle covers the canvas, its blending is `.source`
    ///   (a plugin reports `.source` for a frame with no transparent pixels, such as a GIF frame
    ///   without a transparent index), and its disposal is not `.previous` (which would restore
    ///   the earlier canvas afterwards).
    ///
    /// A seek to frame `k` resets the canvas to transparent and replays from the last
    /// independent frame at or before `k`; these rules make that equal to playing from the start.
    public static func independence(of infos: [AnimationFrameInfo], canvasWidth: Int, canvasHeight: Int) -> [Bool] {
        infos.indices.map { i in
            if i == 0 { return true }
            let previous = infos[i - 1]
            if previous.disposal == .background, previous.covers(canvasWidth: canvasWidth, canvasHeight: canvasHeight) {
                return true
            }
            let info = infos[i]
            return info.blending == .source && info.disposal != .previous
                && info.covers(canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        }
    }

    /// The bytes an iterator needs: the canvas, a saved copy for disposal to previous, and
    /// the largest frame; `nil` when it does not fit in an `Int`.
    public var iteratorBytes: Int? {
        var largest = 0
        for info in frameInfos {
            let (pixels, o1) = info.width.multipliedReportingOverflow(by: info.height)
            let (bytes, o2) = pixels.multipliedReportingOverflow(by: 4)
            if o1 || o2 { return nil }
            largest = max(largest, bytes)
        }
        return Self.iteratorBytes(canvasSize: canvasSize, largestFrameBytes: largest)
    }

    /// The bytes playing a `canvasSize` animation holds at most, so a caller can check a memory
    /// budget: the RGBA canvas, a saved rectangle (at most a canvas) and one frame; `nil` when it
    /// does not fit in an `Int`.
    public static func iteratorBytes(canvasSize: ImageSize, largestFrameBytes: Int) -> Int? {
        let (pixels, o1) = canvasSize.width.multipliedReportingOverflow(by: canvasSize.height)
        let (canvasBytes, o2) = pixels.multipliedReportingOverflow(by: 8)
        let (total, o3) = canvasBytes.addingReportingOverflow(largestFrameBytes)
        return o1 || o2 || o3 ? nil : total
    }

    /// Makes a fresh frame decoder, the plugin's own, which decodes each frame's rectangle
    /// without compositing.
    ///
    /// For layers that forward an animation elsewhere (NukeIsolation serves frames from a helper
    /// process); to play an animation, use `makeIterator(memoryBudget:)`.
    /// - Throws: The plugin's error when its frame decoder cannot be made.
    public func makeFrameDecoder() throws(ImageCodecError) -> any AnimationFrameDecoding {
        try makeDecoder()
    }
}
