import NukeCore

/// One image found by ``GIFScanner``: where its bytes are and what its graphics control
/// extension said.
struct GIFFrameRecord: Sendable, Hashable {
    /// The offset of the image descriptor's 0x2C byte.
    var offset: Int
    /// The offset just past the block terminator of its image data.
    var end: Int
    var left: Int
    var top: Int
    var width: Int
    var height: Int
    var isInterlaced: Bool
    /// The transparent colour index, or -1.
    var transparentIndex: Int
    /// The delay in centiseconds, as stored.
    var delay: Int
    /// The disposal method as stored (0–7).
    var disposalMethod: Int

    /// The frame in the core's model.
    ///
    /// Disposal: 2 is background, 3 previous, and 4 previous too (Chromium reads it so, after old
    /// encoders that set the third bit); 0, 1 and 5–7 leave the frame in place. Blending is
    /// `.over` when the frame has a transparent index and `.source` otherwise (every pixel is
    /// then opaque, so both give the same canvas, and `.source` lets a seek start there).
    var info: AnimationFrameInfo {
        let disposal: AnimationFrameInfo.Disposal
        switch disposalMethod {
        case 2: disposal = .background
        case 3, 4: disposal = .previous
        default: disposal = .none
        }
        return AnimationFrameInfo(
            x: left, y: top, width: width, height: height,
            duration: Double(delay) / 100,
            disposal: disposal,
            blending: transparentIndex >= 0 ? .over : .source
        )
    }
}
