#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CJXLShim
import NukeCore
import NukePluginKit
import NukePixels

/// Decodes a JPEG XL as its bytes arrive, at a total cost linear in the file size.
///
/// A still image goes through one libjxl decoder kept for the whole decode and given only the
/// new bytes (``JXLDecoderHandle``); libjxl writes straight into the bitmap's storage, which it
/// keeps until the frame is complete. When the decode began before the last byte and previews are
/// wanted, libjxl reports each progressive pass (`kPasses`) and flushes what it has into the
/// bitmap, a copy of which is the preview.
///
/// An animation is decoded once every byte is there: a first pass reads the frame headers
/// (durations) without pixels, then ``JXLFrameDecoder`` decodes frames on demand.
///
/// Contract: ``push(_:)`` appends only bytes not given before; ``finish()`` says no more come;
/// ``next()`` reports the next event.
final class JXLIncrementalDecoder: InputKeepingDecoder {
    typealias Event = ImageDecodingEvent

    private let context: ImageDecodingContext
    var input = IncrementalInput()
    private var bytesFed = 0
    private var inputClosed = false
    private var handle: JXLDecoderHandle?
    /// Whether the handle reports progressive passes (previews wanted while bytes still come).
    private var isProgressive = false
    private var info: nukejxl_basic_info?
    private var pixelFormat = PixelFormat.rgba8
    private var pixels: Bitmap?
    private var icc: Data?
    private var nclx: [Int]?
    private var passes = 0
    private var isAnimated = false

    init(context: ImageDecodingContext) {
        self.context = context
    }

    /// The next event.
    ///
    /// - Throws: ``ImageCodecError``: `.corrupt`, `.incomplete` (after ``finish()``),
    ///   `.limitExceeded`, `.cancelled`.
    func next() throws(ImageCodecError) -> Event {
        if isAnimated { return try nextAnimation() }
        let handle: JXLDecoderHandle
        if let existing = self.handle {
            handle = existing
        } else {
            isProgressive = input.wantsPreviews && !input.isFinished
            handle = try JXLDecoderHandle(
                maxPixels: context.limits.maxPixelCount, pixels: true, progressive: isProgressive,
                keepsPremultiplied: context.prefersPremultipliedAlpha
            )
            self.handle = handle
        }
        try feed(handle)
        while true {
            switch try process(handle) {
            case .needsMoreData:
                return .needsMoreData
            case .basicInfo:
                let header = try begin(handle.info)
                if isAnimated { self.handle = nil }
                return .header(header)
            case .color:
                let color = handle.color
                if color.has_nclx != 0 {
                    nclx = [Int(color.nclx.0), Int(color.nclx.1), Int(color.nclx.2), Int(color.nclx.3)]
                } else {
                    icc = handle.iccProfile
                }
            case .frame:
                if pixels == nil, let info {
                    handle.setOutput(pixelFormat)
                    // Previews show what is not decoded yet: zeroed then. Otherwise libjxl writes every byte.
                    pixels = try context.allocator.makeBitmap(width: Int(info.width), height: Int(info.height), pixelFormat: pixelFormat,
                                                              alphaMode: alphaMode, zeroed: isProgressive)
                }
            case .pass:
                passes += 1
                if input.wantsPreviews, let pixels {
                    let userInfo: [ImageContainer.UserInfoKey: any Sendable] = [
                        .scanNumberKey: passes, .isProgressiveKey: true, .bytesConsumedKey: bytesFed,
                    ]
                    return .preview(ImageContainer(image: makeImage(try copy(pixels)), type: .jxl, isPreview: true, userInfo: userInfo))
                }
            case .frameComplete:
                return .final(try finalStill())
            case .done:
                throw JXLLibrary.error(.corrupt, "the JPEG XL codestream ends without a frame")
            }
        }
    }

    /// A preview's own pixels: libjxl keeps writing into the decoder's bitmap.
    private func copy(_ bitmap: Bitmap) throws(ImageCodecError) -> Bitmap {
        try context.allocator.makeBitmap(width: bitmap.width, height: bitmap.height, pixelFormat: bitmap.pixelFormat,
                                         alphaMode: bitmap.alphaMode, bytesPerRow: bitmap.bytesPerRow) { output in
            bitmap.withUnsafeBytes { output.copyMemory(from: $0) }
        }
    }

    // MARK: - Input

    private func feed(_ handle: JXLDecoderHandle) throws(ImageCodecError) {
        let bytes = input.bytes
        if bytesFed < bytes.count {
            let start = bytesFed
            try bytes.withUnsafeBytes { raw in
                Result { () throws(ImageCodecError) in try handle.append(UnsafeRawBufferPointer(rebasing: raw[start...])) }
            }.get()
            bytesFed = bytes.count
        }
        if input.isFinished, !inputClosed {
            handle.closeInput()
            inputClosed = true
        }
    }

    /// One step of libjxl, writing into the bitmap. Nothing else holds it before the final image
    /// (previews are copies), so its storage stays where libjxl was told to write.
    private func process(_ handle: JXLDecoderHandle) throws(ImageCodecError) -> JXLDecoderHandle.Event {
        let context = self.context
        guard var bitmap = pixels else {
            return try context.withShimCancellation { (cancellation) throws(ImageCodecError) in
                try handle.process(into: nil, stride: 0, cancellation: cancellation)
            }
        }
        pixels = nil
        defer { pixels = bitmap }
        let stride = bitmap.bytesPerRow
        return try bitmap.withUnsafeMutableBytes { (output) throws(ImageCodecError) in
            try context.withShimCancellation { (cancellation) throws(ImageCodecError) in
                try handle.process(into: output, stride: stride, cancellation: cancellation)
            }
        }
    }

    // MARK: - Header

    private var alphaMode: AlphaMode {
        guard let info, info.alpha_bits > 0 else { return .none }
        return info.alpha_premultiplied != 0 && context.prefersPremultipliedAlpha ? .premultiplied : .straight
    }

    /// Checks the limits and chooses the output format.
    private func begin(_ info: nukejxl_basic_info) throws(ImageCodecError) -> ImageHeader {
        self.info = info
        let width = Int(info.width), height = Int(info.height)
        guard width > 0, height > 0 else { throw JXLLibrary.error(.corrupt, .header, "the JPEG XL declares a \(width)×\(height) image") }
        let hasAlpha = info.alpha_bits > 0
        let gray = info.num_color_channels == 1
        let wide = context.prefersHighBitDepth && info.bits_per_sample > 8
        let channels: PixelFormat.Channels = gray ? (hasAlpha ? .grayAlpha : .gray) : (hasAlpha ? .rgba : .rgb)
        pixelFormat = PixelFormat(channels: channels, bitsPerChannel: wide ? 16 : 8)
        isAnimated = info.have_animation != 0
        try context.limits.check(
            width: width, height: height, bytesPerPixel: isAnimated ? 4 : pixelFormat.bytesPerPixel, format: .jxl, codec: JXLLibrary.codecName,
            inputByteCount: input.isFinished ? input.bytes.count : nil
        )
        if isAnimated {
            let needed = ImageAnimation.iteratorBytes(canvasSize: ImageSize(width: width, height: height), largestFrameBytes: width * height * 4)
            guard let needed, needed <= context.limits.maxDecodedBytes else {
                throw JXLLibrary.error(.limitExceeded, .header, "compositing frames on a \(width)×\(height) canvas needs more than the maximum \(context.limits.maxDecodedBytes) bytes")
            }
        }
        return ImageHeader(
            type: .jxl, width: width, height: height, bitDepth: Int(info.bits_per_sample),
            componentCount: Int(info.num_color_channels) + (hasAlpha ? 1 : 0), hasAlpha: hasAlpha,
            isProgressive: false, isAnimated: isAnimated, orientation: ImageOrientation(rawValue: UInt8(clamping: info.orientation))
        )
    }

    // MARK: - Still images

    private func finalStill() throws(ImageCodecError) -> ImageContainer {
        guard let bitmap = pixels, let info else { throw JXLLibrary.error(.corrupt, "the JPEG XL frame has no pixels") }
        pixels = nil
        handle = nil
        var userInfo = metadataUserInfo(info)
        userInfo[.isProgressiveKey] = passes > 0
        // At full size: the core's driver resamples it to the target.
        return ImageContainer(image: makeImage(bitmap), type: .jxl, isPreview: false, userInfo: userInfo)
    }

    private func metadataUserInfo(_ info: nukejxl_basic_info) -> [ImageContainer.UserInfoKey: any Sendable] {
        var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [
            .jxlBitDepthKey: Int(info.bits_per_sample), .jxlIsFloatKey: info.exponent_bits_per_sample > 0,
        ]
        if let nclx { userInfo[.nclxKey] = nclx }
        return userInfo
    }

    /// The image with the file's colour and orientation (reported, not applied).
    private func makeImage(_ bitmap: Bitmap) -> Image {
        var image = Image(bitmap: bitmap)
        image.colorInfo.iccProfile = icc
        if let info, let orientation = ImageOrientation(rawValue: UInt8(clamping: info.orientation)) {
            image.orientation = orientation
        }
        return image
    }

    // MARK: - Animations

    private func nextAnimation() throws(ImageCodecError) -> Event {
        guard input.isFinished, let info else { return .needsMoreData }
        let bytes = input.bytes
        let scan = try JXLFrameDecoder.scan(bytes, info: info, limits: context.limits, cancellation: context.cancellation)
        icc = scan.icc
        nclx = scan.nclx
        let frames = scan.frames
        guard !frames.isEmpty else { throw JXLLibrary.error(.corrupt, "the animated JPEG XL has no frame") }
        let canvas = ImageSize(width: Int(info.width), height: Int(info.height))
        let maxPixels = context.limits.maxPixelCount
        let cancellation = context.cancellation
        let first = try JXLFrameDecoder(bytes: bytes, frames: frames, maxPixels: maxPixels, cancellation: cancellation).decodeFrame(at: 0)
        // The core's driver finishes a decode to size of the first frame, and premultiplies.
        var userInfo = metadataUserInfo(info)
        userInfo[.isProgressiveKey] = false
        let animation = ImageAnimation(
            canvasSize: canvas, loopCount: Int(info.num_loops), frameInfos: frames, type: .jxl, codec: JXLLibrary.codecName,
            makeDecoder: { () throws(ImageCodecError) -> any AnimationFrameDecoding in
                JXLFrameDecoder(bytes: bytes, frames: frames, maxPixels: maxPixels, cancellation: cancellation)
            }
        )
        return .final(ImageContainer(image: makeImage(first), type: .jxl, isPreview: false, userInfo: userInfo, animation: animation))
    }
}
