#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CJXLShim
import NukeCore
import NukePluginKit

/// Decodes a complete animated JPEG XL's frames for ``NukeCore/ImageAnimation``, in order.
///
/// libjxl composites the frames (coalescing), so every frame is a whole canvas drawn with
/// `.source` blending; a frame is decoded by running one decoder through the frames before it,
/// and going back starts a new decoder.
final class JXLFrameDecoder: AnimationFrameDecoding {
    /// What a pass over the headers found.
    struct Scan {
        var frames: [AnimationFrameInfo]
        var icc: Data?
        var nclx: [Int]?
    }

    private let bytes: Data
    private let frames: [AnimationFrameInfo]
    private let maxPixels: Int
    private let cancellation: ImageDecodingCancellation?
    private var handle: JXLDecoderHandle?
    /// The index of the frame whose header the handle read last; -1 before the first.
    private var current = -1

    init(bytes: Data, frames: [AnimationFrameInfo], maxPixels: Int, cancellation: ImageDecodingCancellation?) {
        self.bytes = bytes
        self.frames = frames
        self.maxPixels = maxPixels
        self.cancellation = cancellation
    }

    var frameCount: Int { frames.count }

    func info(at index: Int) -> AnimationFrameInfo { frames[index] }

    func reset() throws(ImageCodecError) {
        handle = nil
        current = -1
    }

    /// Decodes frame `index` as an `.rgba8` straight-alpha canvas. After an error the next call
    /// starts from the first frame again.
    func decodeFrame(at index: Int) throws(ImageCodecError) -> Bitmap {
        if cancellation?.isCancelled == true { throw JXLLibrary.error(.cancelled, "cancelled before JPEG XL frame \(index + 1)") }
        if index <= current { try reset() }
        do {
            return try decode(index)
        } catch {
            try reset()
            throw error
        }
    }

    private func decode(_ index: Int) throws(ImageCodecError) -> Bitmap {
        let handle: JXLDecoderHandle
        if let existing = self.handle {
            handle = existing
        } else {
            handle = try Self.makeHandle(bytes, maxPixels: maxPixels, pixels: true)
            self.handle = handle
        }
        let frame = frames[index]
        var bitmap = try PixelAllocator.heap.makeBitmap(width: frame.width, height: frame.height, pixelFormat: .rgba8, alphaMode: .straight)
        let cancellation = self.cancellation ?? .taskOnly
        while true {
            let wanted = current == index
            let event = try bitmap.withUnsafeMutableBytes { (output) throws(ImageCodecError) in
                try cancellation.withShimCancellation { (shim) throws(ImageCodecError) in
                    // Frames before the wanted one are decoded (later ones depend on them) but not written.
                    try handle.process(into: wanted ? output : nil, stride: frame.width * 4, cancellation: shim)
                }
            }
            switch event {
            case .basicInfo: handle.setOutput(.rgba8)
            case .frame: current += 1
            case .frameComplete: if current == index { return bitmap }
            case .color, .pass: continue
            case .needsMoreData, .done:
                throw JXLLibrary.error(.incomplete, "the JPEG XL animation ends before frame \(index + 1)")
            }
        }
    }

    static func makeHandle(_ bytes: Data, maxPixels: Int, pixels: Bool) throws(ImageCodecError) -> JXLDecoderHandle {
        let handle = try JXLDecoderHandle(maxPixels: maxPixels, pixels: pixels, progressive: false, keepsPremultiplied: false)
        try bytes.withUnsafeBytes { raw in Result { () throws(ImageCodecError) in try handle.append(raw) } }.get()
        handle.closeInput()
        return handle
    }

    /// Reads every frame's header (libjxl skips the pixels), the colour and the durations.
    ///
    /// - Throws: `.limitExceeded` past `limits.maxFrameCount` frames; libjxl's errors.
    static func scan(_ bytes: Data, info: nukejxl_basic_info, limits: ImageLimits, cancellation: ImageDecodingCancellation?) throws(ImageCodecError) -> Scan {
        let handle = try makeHandle(bytes, maxPixels: limits.maxPixelCount, pixels: false)
        var scan = Scan(frames: [])
        let secondsPerTick = info.tps_numerator > 0 ? Double(info.tps_denominator) / Double(info.tps_numerator) : 0
        while true {
            let event = try (cancellation ?? .taskOnly).withShimCancellation { (shim) throws(ImageCodecError) in
                try handle.process(into: nil, stride: 0, cancellation: shim)
            }
            switch event {
            case .basicInfo, .pass, .frameComplete: continue
            case .color:
                let color = handle.color
                if color.has_nclx != 0 {
                    scan.nclx = [Int(color.nclx.0), Int(color.nclx.1), Int(color.nclx.2), Int(color.nclx.3)]
                } else {
                    scan.icc = handle.iccProfile
                }
            case .frame:
                guard scan.frames.count < limits.maxFrameCount else {
                    throw JXLLibrary.error(.limitExceeded, "the JPEG XL has more than the maximum \(limits.maxFrameCount) frames")
                }
                scan.frames.append(AnimationFrameInfo(
                    x: 0, y: 0, width: Int(info.width), height: Int(info.height),
                    duration: Double(handle.frameDuration) * secondsPerTick, disposal: .none, blending: .source
                ))
            case .done:
                return scan
            case .needsMoreData:
                throw JXLLibrary.error(.incomplete, "the JPEG XL animation ends after \(scan.frames.count) frames")
            }
        }
    }
}
