/// What an animation says about one frame: where it goes on the canvas, how long it shows,
/// how it blends and what happens to it afterwards.
///
/// Shared by every animated format (GIF, APNG, WebP, HEIF sequences); the core's
/// `AnimationCompositor` turns frames and their infos into canvases as browsers do.
public struct AnimationFrameInfo: Sendable, Hashable {
    /// What happens to the frame's rectangle before the next frame is drawn.
    public enum Disposal: Sendable, Hashable {
        /// Leave the pixels in place (GIF 0, 1 and 5–7; APNG `NONE`; WebP "do not dispose").
        case none
        /// Clear the rectangle to transparent black (GIF 2, APNG `BACKGROUND`, WebP "dispose to
        /// background"). Browsers clear to transparent, not to the GIF background colour.
        case background
        /// Restore the rectangle to what it was before the frame was drawn (GIF 3, and 4 as
        /// Chromium reads it; APNG `PREVIOUS`).
        case previous
    }

    /// How the frame's pixels combine with the canvas.
    public enum Blending: Sendable, Hashable {
        /// Replace the canvas pixels in the rectangle, alpha included.
        case source
        /// Composite over the canvas (source-over, straight alpha).
        case over
    }

    /// The frame's rectangle on the canvas, as stored. It may lie partly or wholly outside
    /// the canvas; what lies outside is clipped.
    public var x: Int
    /// The top edge of the frame's rectangle on the canvas, in pixels (may be outside it).
    public var y: Int
    /// The width of the frame's rectangle, in pixels.
    public var width: Int
    /// The height of the frame's rectangle, in pixels.
    public var height: Int
    /// The duration as the file stores it, in seconds (a GIF's centiseconds / 100).
    public var duration: Double
    /// What happens to the frame's rectangle before the next frame is drawn.
    public var disposal: Disposal
    /// How the frame's pixels combine with the canvas.
    public var blending: Blending
    /// `true` when the canvas after this frame does not depend on any earlier frame, so a seek
    /// may start decoding here. ``ImageAnimation`` computes it (see
    /// ``ImageAnimation/independence(of:canvasWidth:canvasHeight:)``); a plugin may leave it `false`.
    public var isIndependent: Bool

    /// Creates a frame's info; `isIndependent` is normally left to ``ImageAnimation``, which recomputes it.
    public init(
        x: Int, y: Int, width: Int, height: Int,
        duration: Double,
        disposal: Disposal = .none,
        blending: Blending = .over,
        isIndependent: Bool = false
    ) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.duration = duration
        self.disposal = disposal
        self.blending = blending
        self.isIndependent = isIndependent
    }

    /// The duration browsers show: delays of 10 ms or less are shown as 100 ms.
    ///
    /// Chromium, Firefox and Safari all apply this rule to GIF (it dates back to Netscape), so
    /// a file's "0" delay plays at 10 frames per second. ``duration`` keeps the stored value.
    public var browserDuration: Double {
        duration <= 0.010 ? 0.1 : duration
    }

    /// The longest delay a format can store: APNG's 65,535/1 s (WebP's 24-bit milliseconds reach
    /// 16,777 s, GIF's centiseconds 655.35 s).
    public static let maximumStorableDuration = 65_535.0

    /// `seconds` as an encoder can store it: NaN and negative durations are 0, longer ones
    /// ``maximumStorableDuration``. Encoders convert through this, so that no duration, whoever
    /// made it, traps in an integer conversion.
    public static func storableDuration(_ seconds: Double) -> Double {
        guard seconds.isFinite else { return seconds == .infinity ? maximumStorableDuration : 0 }
        return min(max(seconds, 0), maximumStorableDuration)
    }

    /// `true` when the rectangle covers the whole `width × height` canvas.
    public func covers(canvasWidth: Int, canvasHeight: Int) -> Bool {
        x <= 0 && y <= 0 && x + width >= canvasWidth && y + height >= canvasHeight
    }
}
