#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CWebPShim
import NukeCore
import NukePluginKit

/// Decodes a complete animated WebP's frames for ``NukeCore/ImageAnimation``: random access by
/// frame, since ``WebPContainer`` found every frame's bitstream, so a seek skips for free.
final class WebPFrameDecoder: AnimationFrameDecoding {
    private let bytes: Data
    private let frames: [WebPContainer.Frame]
    private let cancellation: ImageDecodingCancellation?

    init(bytes: Data, frames: [WebPContainer.Frame], cancellation: ImageDecodingCancellation?) {
        self.bytes = bytes
        self.frames = frames
        self.cancellation = cancellation
    }

    var frameCount: Int { frames.count }

    func info(at index: Int) -> AnimationFrameInfo { frames[index].info }

    func decodeFrame(at index: Int) throws(ImageCodecError) -> Bitmap {
        if cancellation?.isCancelled == true {
            throw WebPLibrary.error(.cancelled, "cancelled before WebP frame \(index + 1)")
        }
        return try Self.decode(frames[index], index: index, in: bytes, cancellation: cancellation)
    }

    /// Nothing to do: every frame's bytes are known, so any frame can be decoded next.
    func reset() throws(ImageCodecError) {}

    /// Decodes one frame's bitstream into an `.rgba8` straight-alpha bitmap of the frame's size.
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` `.corrupt` when the bitstream's size differs from
    ///   the frame's (libwebp's demuxer refuses such files), or libwebp's error.
    ///
    /// The corresponding libwebp functions are `WebPGetFeatures` and `WebPIUpdate`.
    static func decode(
        _ frame: WebPContainer.Frame, index: Int, in bytes: Data, cancellation: ImageDecodingCancellation?
    ) throws(ImageCodecError) -> Bitmap {
        let info = frame.info
        let result = bytes.withUnsafeBytes { raw in Result { () throws(ImageCodecError) -> Bitmap in
            let payload = UnsafeRawBufferPointer(rebasing: raw[frame.payload])
            let base = payload.bindMemory(to: UInt8.self).baseAddress!
            var features = nukewebp_features()
            var diagnostics = nuke_diagnostics()
            let status = nukewebp_get_features(base, payload.count, &features, &diagnostics)
            guard status == NUKE_STATUS_OK else {
                let failure: nuke_status = status == NUKE_STATUS_NEED_MORE ? NUKE_STATUS_CORRUPT : status
                if status == NUKE_STATUS_NEED_MORE { diagnostics.setMessage("the frame's bitstream is truncated") }
                throw WebPLibrary.error(status: failure, diagnostics: diagnostics, context: "reading WebP frame \(index + 1)")
            }
            guard Int(features.width) == info.width, Int(features.height) == info.height else {
                throw WebPLibrary.error(.corrupt, "WebP frame \(index + 1) declares \(info.width)×\(info.height) but its bitstream is \(features.width)×\(features.height)")
            }
            return try PixelAllocator.heap.makeBitmap(width: info.width, height: info.height, pixelFormat: .rgba8, alphaMode: .straight) { (output) throws(ImageCodecError) in
                let status = (cancellation ?? .taskOnly).withShimCancellation { shimCancellation in
                    nukewebp_decode(base, payload.count, NUKEWEBP_RGBA, output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                    info.width * 4, output.count, 0, 0,
                                    info.width * info.height > WebPStillDecoding.oneCallPixels ? shimCancellation : nil, &diagnostics)
                }
                guard status == NUKE_STATUS_OK else {
                    throw WebPLibrary.error(status: status, diagnostics: diagnostics, context: "decoding WebP frame \(index + 1)")
                }
            }
        } }
        return try result.get()
    }
}

extension nuke_diagnostics {
    /// Sets the message, truncated to the capacity.
    mutating func setMessage(_ text: String) {
        withUnsafeMutablePointer(to: &self) { nuke_diagnostics_set_message($0, text) }
    }
}
