#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a decoder is told when it is created: the data, whether it is complete, the
/// requested size, the limits and the caller's extra information.
public struct ImageDecodingContext: Sendable {
    /// The data received so far (all of it when ``isCompleted``).
    public var data: Data
    /// `true` when ``data`` is the complete file.
    public var isCompleted: Bool
    /// The format sniffed from ``data``, if recognised.
    public var type: ImageType?
    /// The size the caller will display the image at, in pixels: the decode returns the image
    /// fitted or filled to it (``contentMode``), never enlarged, planned by the core
    /// (``scalePlan(for:)``): a codec reduces natively as far as the plan allows and the core's
    /// resampler finishes.
    public var targetSize: ImageSize?
    /// How ``targetSize`` is covered.
    public var contentMode: ContentMode
    /// Keep 16 bits per channel when the file has them (default: decode to 8 bits).
    public var prefersHighBitDepth: Bool
    /// Bounds checked after the header and before pixel memory is allocated.
    public var limits: ImageLimits
    /// Lets the caller stop a decode in progress; decoders check it between rows or scans.
    public var cancellation: ImageDecodingCancellation?
    /// Anything else the caller wants decoders to see.
    public var userInfo: [String: any Sendable]
    /// Where decoders get pixel memory (default: the heap). Use `.pool(...)` to reuse buffers.
    public var allocator: PixelAllocator
    /// Refuse data the codec only warns about (corrupt entropy data, bad CRCs, extraneous bytes)
    /// with a `.corrupt` error instead of returning a partly grey or partly missing image.
    /// Default `false`, as browsers and the C libraries' own tools behave.
    public var isStrict: Bool
    /// Return images with alpha premultiplied (``AlphaMode/premultiplied``), as compositing
    /// wants them. Decoders that can produce premultiplied pixels natively do (WebP); for the
    /// others ``ImageDecoderRegistry`` converts the final image. Default `false`: straight
    /// alpha, as the file stores it.
    public var prefersPremultipliedAlpha: Bool = false
    /// Let a codec whose own scaler is faster but softer than the core's resampler scale
    /// straight to the exact target size with it, as `vipsthumbnail` and sharp's
    /// `fastShrinkOnLoad` do. Today that is libwebp's scaler for opaque WebP: about 10% less
    /// time for a 1/8 reduction, for about 3 dB less PSNR against a Lanczos reference than the
    /// default. Default `false`: a codec's scaler goes only down to twice the target, and the
    /// core finishes with Pillow's thumbnail algorithm (box reduction, then bicubic).
    public var prefersFastScaling: Bool = false
    /// Turn the pixels upright as the EXIF orientation says, and return an image whose
    /// ``Image/orientation`` is ``ImageOrientation/up`` (the orientation applied is in
    /// ``ImageContainer/UserInfoKey/appliedOrientationKey``), as `vipsthumbnail` and sharp's
    /// `rotate()` do. ``targetSize`` is then the box for the image as displayed. The transpose or
    /// flip runs on the decoded image after any reduction, so a thumbnail pays for its own pixels.
    /// HEIF's `irot`/`imir` are always applied by libheif, and the EXIF orientation a HEIF carries
    /// is reported as applied with them. Default `false`: pixels as stored, as Nuke and ImageIO
    /// return them.
    public var appliesOrientation: Bool = false
    /// Convert the pixels to this colour, from the ICC profile or `nclx` description the file
    /// carries (sRGB when it carries none), through the program's colour manager
    /// (``ImageColorManagement``: link NukeColor). Done by the output stage on the decoded,
    /// already reduced image; a CMYK JPEG is converted row by row as it decodes. What was done is
    /// in ``ImageContainer/UserInfoKey/colorConversionKey``. Default `nil`: pixels in the file's
    /// colour, its profile reported — except colour a bitmap cannot carry
    /// (``managesUncarriedColor``).
    public var colorConversion: ImageColorTarget?
    /// With ``colorConversion`` `nil`, pixels stored in a colour a ``Bitmap`` cannot carry (CMYK:
    /// a bitmap is gray or RGB) are converted to sRGB through the file's profile (else a standard
    /// CMYK one), when a colour manager is linked (NukeColor): a codec's own CMYK → RGB formula
    /// is tens of levels off. The registry applies the rule once, from the header, on every path
    /// (one call, sessions, helpers, `nuke convert`, NukePipeline). Default `true`; `false` keeps
    /// the codec's formula (`nuke convert --color keep`).
    public var managesUncarriedColor: Bool = true
    /// Leave the output stage (``appliesOrientation``, ``colorConversion``,
    /// ``prefersPremultipliedAlpha``) to the caller: the decode is planned as they ask (a box
    /// turned for the orientation, a CMYK JPEG converted as it decodes), but the image comes back
    /// as decoded, with its ``Image/orientation``. The caller finishes it with
    /// ``ImageContainer/finishOutputStage(for:)``, after steps of its own that only move pixels
    /// (NukeProcessing's crops, turns and flips, run with the orientation as one copy), so the
    /// colour is converted on the pixels kept. Default `false`.
    public var defersOutputStage: Bool = false
    /// The whole file, open, for a codec that reads files by their offsets
    /// (``ImageCodecCapabilities/readsFiles``: NukeTIFF): it reads the bytes it needs from here,
    /// and ``data`` need only hold enough to recognise the format. The file is then never held
    /// whole in memory. Set it only when every decoder the registry has for the format is such a
    /// codec (``ImageDecoderRegistry/registeredCodecs``: a codec isolated in helper processes is
    /// not, as a helper cannot open the file); other decoders read ``data``. Default `nil`.
    public var file: ImageFileSource?

    /// How a scaled decode covers ``targetSize``.
    public enum ContentMode: Sendable, Hashable {
        /// Both sides at least as large as the target's (the image fills the target).
        case aspectFill
        /// At least one side as large as the target's, the other may be smaller (the image
        /// fits inside the target).
        case aspectFit
    }

    /// Creates a context; every option but `data` has the default a plain decode uses.
    public init(
        data: Data,
        isCompleted: Bool = true,
        targetSize: ImageSize? = nil,
        contentMode: ContentMode = .aspectFill,
        prefersHighBitDepth: Bool = false,
        limits: ImageLimits = .default,
        cancellation: ImageDecodingCancellation? = nil,
        userInfo: [String: any Sendable] = [:],
        allocator: PixelAllocator = .heap,
        isStrict: Bool = false
    ) {
        self.data = data
        self.isCompleted = isCompleted
        self.type = ImageType(data)
        self.targetSize = targetSize
        self.contentMode = contentMode
        self.prefersHighBitDepth = prefersHighBitDepth
        self.limits = limits
        self.cancellation = cancellation
        self.userInfo = userInfo
        self.allocator = allocator
        self.isStrict = isStrict
    }

    /// `true` when the caller cancelled through ``cancellation`` or the current task is cancelled.
    public var isCancelled: Bool {
        cancellationToken.isCancelled
    }

    /// The token decoders poll, from C callbacks too: ``cancellation``, or one that follows the
    /// task the check is made in (``ImageDecodingCancellation/taskOnly``).
    public var cancellationToken: ImageDecodingCancellation {
        cancellation ?? .taskOnly
    }

    /// Throws `.cancelled` when the decode was cancelled: the check the core's drivers make
    /// between a decoder's steps.
    ///
    /// - Parameter codec: The codec the error names.
    public func checkCancellation(codec: String? = nil) throws(ImageCodecError) {
        guard isCancelled else { return }
        throw ImageCodecError(.cancelled, stage: .decoding, format: type, codec: codec, message: "cancelled")
    }

    /// Holds an image a decoder returned to the limits (dimensions, pixel count, frames, bytes,
    /// and its ICC profile, EXIF and XMP to ``ImageLimits/maxMetadataBytes`` each): what the
    /// core's drivers check whatever the decoder checked itself. An empty image (a row-sink
    /// decode's, `ImageDecoders.Empty`'s) holds no pixels to limit.
    ///
    /// - Parameters:
    ///   - container: The decoded image.
    ///   - codec: The codec the error names.
    public func checkLimits(of container: ImageContainer, codec: String? = nil) throws(ImageCodecError) {
        let image = container.image
        for (name, bytes) in [("ICC profile", image.colorInfo.iccProfile), ("EXIF", image.exif), ("XMP", image.xmp)] {
            guard let count = bytes?.count, count > limits.maxMetadataBytes else { continue }
            throw ImageCodecError(.limitExceeded, stage: .decoding, format: container.type ?? type, codec: codec,
                                  message: "the \(name) of \(count) bytes exceeds the maximum metadata size \(limits.maxMetadataBytes)")
        }
        let bitmap = image.bitmap
        guard bitmap.width > 0 || bitmap.height > 0 else { return }
        try limits.check(width: bitmap.width, height: bitmap.height, bytesPerPixel: bitmap.pixelFormat.bytesPerPixel,
                         frameCount: container.image.frames.count, format: container.type ?? type, codec: codec)
    }
}

/// A size in pixels.
public struct ImageSize: Sendable, Hashable, CustomStringConvertible {
    /// The width in pixels.
    public var width: Int
    /// The height in pixels.
    public var height: Int

    /// Creates a size of `width × height` pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)×\(height)" }
}
