#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit
import NukePixels
internal import CJPEGShim

/// What a decode will produce, decided after the header and before any pixel memory exists:
/// the scale, the output size and pixel format, and the file's metadata.
struct JPEGDecodePlan {
    /// The DCT scale numerator: the output is `scale`/8 of the full size.
    var scale: Int
    var outputSize: ImageSize
    var pixelFormat: PixelFormat
    var isProgressive: Bool
    /// Arithmetic coding (SOF9/SOF10), whose decoder in libjpeg cannot suspend.
    var isArithmetic: Bool
    /// `true` for a multi-scan file: decoded through the whole-image coefficient buffer.
    var hasMultipleScans: Bool
    var orientation: ImageOrientation
    var exif: Data?
    var iccProfile: Data?
    /// The N/8 the core chose for a decode to size.
    var reduction: ImageNativeReduction?
    /// A CMYK file's conversion through the colour manager, when the decode asks for one
    /// (``NukeCore/ImageDecodingContext/colorConversion``): rows come out in the target colour.
    var cmykConversion: (converter: CMYKRowConverter, target: ImageColorTarget)?

    var bytesPerRow: Int { outputSize.width * pixelFormat.bytesPerPixel }

    /// Checks the header against the context's limits, picks the DCT scale for its target
    /// size, and reads the EXIF and ICC metadata.
    ///
    /// - Throws: ``ImageCodecError`` `.limitExceeded` before anything large is allocated.
    init(header: JPEGDecompressor.Header, decompressor: JPEGDecompressor, context: ImageDecodingContext) throws(ImageCodecError) {
        let limits = context.limits
        // Dimensions and pixel count as declared; bytes are checked below at the output scale.
        try limits.check(width: header.width, height: header.height, bytesPerPixel: 0, format: .jpeg, codec: JPEGLibrary.codecName)
        // Expansion of the declared image over the complete input (a tiny file declaring a huge image).
        try limits.checkExpansion(
            decodedBytes: header.width &* header.height &* max(header.components, 1),
            inputByteCount: context.isCompleted ? context.data.count : nil, format: .jpeg, codec: JPEGLibrary.codecName
        )

        switch header.colorSpace {
        case Int32(NUKEJPEG_COLOR_GRAY): pixelFormat = .gray8
        case Int32(NUKEJPEG_COLOR_RGB), Int32(NUKEJPEG_COLOR_YCBCR), Int32(NUKEJPEG_COLOR_CMYK), Int32(NUKEJPEG_COLOR_YCCK):
            pixelFormat = .rgb8
        default:
            throw JPEGLibrary.error(.unsupported, .header, "unknown JPEG colour space with \(header.components) components")
        }

        // The N/8 the core chooses for a decode to size (libjpeg rounds sizes up, as the core does).
        reduction = context.nativeReduction(of: ImageSize(width: header.width, height: header.height), among: JPEGPlugin.nativeReductions)
        let scale = reduction?.option ?? 8
        self.scale = scale
        self.outputSize = try decompressor.outputSize(scale: scale)
        self.isProgressive = header.isProgressive
        self.isArithmetic = header.isArithmetic
        self.hasMultipleScans = header.hasMultipleScans

        let (pixels, o1) = outputSize.width.multipliedReportingOverflow(by: outputSize.height)
        let (pixelBytes, o2) = pixels.multipliedReportingOverflow(by: pixelFormat.bytesPerPixel)
        guard !o1, !o2, pixelBytes <= limits.maxDecodedBytes else {
            throw JPEGLibrary.error(.limitExceeded, .header, "decoding \(outputSize.width)×\(outputSize.height) needs more than the maximum \(limits.maxDecodedBytes) bytes"
            )
        }
        // A multi-scan file also needs its whole-image coefficient buffer (2 bytes per sample,
        // rounded up to whole MCUs), which libjpeg allocates itself.
        let budget = JPEGDecompressor.memoryBudget(for: limits)
        if header.hasMultipleScans, header.coefficientBytes > budget {
            throw JPEGLibrary.error(.limitExceeded, .header, "decoding \(header.width)×\(header.height) needs \(header.coefficientBytes) bytes of DCT coefficients for a multi-scan JPEG, more than libjpeg's budget of \(budget) bytes (4 × the maximum decoded bytes + 1 MiB)"
            )
        }

        exif = decompressor.exif()
        orientation = exif.flatMap { ImageOrientation(exif: $0) } ?? .up
        iccProfile = try decompressor.iccProfile()
        if let iccProfile, iccProfile.count > limits.maxMetadataBytes {
            throw JPEGLibrary.error(.limitExceeded, .header, "ICC profile of \(iccProfile.count) bytes exceeds the maximum metadata size \(limits.maxMetadataBytes)"
            )
        }
        // CMYK through the colour manager, row by row at the output scale, when asked for.
        if header.colorSpace == Int32(NUKEJPEG_COLOR_CMYK) || header.colorSpace == Int32(NUKEJPEG_COLOR_YCCK),
           let target = context.colorConversion, let manager = ImageColorManagement.current,
           let converter = try manager.cmykConverter(profile: iccProfile, inverted: true, to: target,
                                                     pixelCount: outputSize.width * outputSize.height) {
            decompressor.setCMYKConverter(converter)
            cmykConversion = (converter, target)
        }
    }

    /// Wraps decoded pixels in a container with this plan's metadata; the core's driver
    /// finishes a decode to size from the stored size and the DCT scale.
    func container(bitmap: Bitmap, context: ImageDecodingContext, isPreview: Bool, scan: Int? = nil,
                   warnings: ImageDecodingWarnings? = nil) -> ImageContainer {
        var colorInfo = ColorInfo(iccProfile: iccProfile)
        var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [.isProgressiveKey: isProgressive]
        if let (converter, target) = cmykConversion {
            // The rows are in the target's colour: its profile (none for sRGB) describes them.
            if case .profile(let profile) = target { colorInfo.iccProfile = profile } else { colorInfo.iccProfile = nil }
            userInfo[.colorConversionKey] = converter.summary
        }
        let image = Image(bitmap: bitmap, orientation: orientation, colorInfo: colorInfo, exif: exif)
        // libjpeg rounds N/8 of the size up: the last row or column covers part of a pixel.
        if let reduction { userInfo.merge(reduction.userInfo) { $1 } }
        if let scan { userInfo[.scanNumberKey] = scan }
        if let warnings { userInfo[.warningsKey] = warnings }
        return ImageContainer(image: image, type: .jpeg, isPreview: isPreview, userInfo: userInfo)
    }

    /// The final image's container, with libjpeg's warnings (the core's driver refuses them
    /// when the decode is strict) and the number of scans libjpeg read
    /// (``NukeCore/ImageContainer/UserInfoKey/scanNumberKey``).
    func finalContainer(bitmap: Bitmap, decompressor: JPEGDecompressor, context: ImageDecodingContext) throws(ImageCodecError) -> ImageContainer {
        container(bitmap: bitmap, context: context, isPreview: false, scan: decompressor.inputScanNumber, warnings: decompressor.warnings)
    }

    /// Reads every remaining row of the current output pass into `buffer`, checking for
    /// cancellation between batches of rows.
    ///
    /// - Returns: `false` when the input ran out first (incremental decoding).
    static func readRows(
        _ decompressor: JPEGDecompressor, into buffer: UnsafeMutableRawBufferPointer, bytesPerRow: Int,
        context: ImageDecodingContext
    ) throws(ImageCodecError) -> Bool {
        let height = decompressor.outputHeight
        let batch = max(1, min(256, (1 << 20) / max(bytesPerRow, 1)))
        while decompressor.outputScanline < height {
            if context.isCancelled { throw cancelled() }
            guard try decompressor.readRows(into: buffer, stride: bytesPerRow, maxRows: batch) else { return false }
        }
        return true
    }

    /// libjpeg asked for more input where all of it was available: a bug, not bad data.
    static func suspendedUnexpectedly() -> ImageCodecError {
        JPEGLibrary.error(.internalFailure, .decoding, "libjpeg asked for more input where none was needed")
    }

    static func cancelled() -> ImageCodecError {
        JPEGLibrary.error(.cancelled, .decoding, "cancelled")
    }
}

/// The final image's rows on their way to an ``ImageRowSink``: libjpeg writes a band of rows
/// (about 1 MiB), the sink takes it, and the band is reused, so the full-size image never exists.
final class JPEGRowBand {
    private let sink: any ImageRowSink
    private let bytesPerRow: Int
    private let rowsPerBand: Int
    private let band: UnsafeMutableRawBufferPointer
    /// The output row at the top of the band.
    private var first = 0

    /// Tells the sink the layout of the output pass that `decompressor` has started.
    init(sink: any ImageRowSink, decompressor: JPEGDecompressor, plan: JPEGDecodePlan) throws(ImageCodecError) {
        self.sink = sink
        bytesPerRow = plan.bytesPerRow
        rowsPerBand = max(16, min(decompressor.outputHeight, (1 << 20) / max(bytesPerRow, 1)))
        band = .allocate(byteCount: rowsPerBand * bytesPerRow, alignment: 64)
        try sink.begin(width: decompressor.outputWidth, height: decompressor.outputHeight, pixelFormat: plan.pixelFormat, alphaMode: .none)
    }

    deinit { band.deallocate() }

    /// Reads rows as far as the input allows, handing each full band, and the last one, to the
    /// sink; checks for cancellation between batches.
    ///
    /// - Returns: `false` when the input ran out first (incremental decoding).
    func read(_ decompressor: JPEGDecompressor, context: ImageDecodingContext) throws(ImageCodecError) -> Bool {
        let height = decompressor.outputHeight
        while decompressor.outputScanline < height {
            if context.isCancelled { throw JPEGDecodePlan.cancelled() }
            let room = rowsPerBand - (decompressor.outputScanline - first)
            guard try decompressor.readRows(into: band, stride: bytesPerRow, firstRow: first, maxRows: room) else { return false }
            let filled = decompressor.outputScanline - first
            if filled == rowsPerBand || decompressor.outputScanline == height {
                try sink.write(rows: UnsafeRawBufferPointer(band), count: filled, bytesPerRow: bytesPerRow)
                first = decompressor.outputScanline
            }
        }
        return true
    }
}

extension ImageContainer.UserInfoKey {
    /// The DCT scale libjpeg decoded at (N/8, a `Double`), before the core's resampler shrank the
    /// remainder to the exact target size: the core's `nativeScaleKey`.
    public static let dctScaleKey: ImageContainer.UserInfoKey = .nativeScaleKey
}
