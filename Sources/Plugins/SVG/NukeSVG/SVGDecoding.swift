#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CSVGShim
import NukeCore
import NukePluginKit

/// Renders a complete SVG document at the size the caller asks for; downloads go through a
/// `WholeInputDecoder`, which renders at `finish()` (``SVGPlugin``).
struct SVGDecoding {
    let context: ImageDecodingContext

    func decode(_ bytes: Data) throws(ImageCodecError) -> ImageContainer {
        let document = try SVGDocument(bytes: bytes, dpi: SVGPlugin.dpi(from: context))
        let intrinsic = document.intrinsicSize
        let size = ImageSize.rendered(width: intrinsic.width, height: intrinsic.height, for: context.targetSize, contentMode: context.contentMode)
        try context.limits.check(width: size.width, height: size.height, bytesPerPixel: 4, format: .svg, codec: SVGLibrary.codecName)
        // What drawing would cost, before librsvg draws anything.
        try SVGBudget.check(try Self.markup(bytes, limits: context.limits), size: size, limits: context.limits)
        if context.isCancelled { throw SVGLibrary.error(.cancelled, "cancelled") }
        let premultiplied = context.prefersPremultipliedAlpha
        let bitmap = try context.allocator.makeBitmap(
            width: size.width, height: size.height, pixelFormat: .rgba8, alphaMode: premultiplied ? .premultiplied : .straight
        ) { (buffer) throws(ImageCodecError) in
            try document.render(into: buffer, size: size, premultiplied: premultiplied)
        }
        var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [
            .svgIntrinsicSizeKey: intrinsic.rounded,
            .isProgressiveKey: false,
        ]
        if let viewBox = document.viewBox { userInfo[.svgViewBoxKey] = viewBox }
        if context.targetSize != nil, size != intrinsic.rounded {
            userInfo[.originalSizeKey] = intrinsic.rounded
            userInfo[.decodeScaleKey] = Double(size.width) / intrinsic.width
        }
        var image = Image(bitmap: bitmap)
        image.colorInfo.sRGBIntent = nil
        return ImageContainer(image: image, type: .svg, isPreview: false, userInfo: userInfo)
    }
}

extension SVGDecoding {
    /// The document's markup: the bytes, or for SVGZ the bytes they decompress to, at most
    /// 64 MiB (and the decode's decoded-bytes limit).
    static func markup(_ bytes: Data, limits: ImageLimits) throws(ImageCodecError) -> Data {
        guard bytes.starts(with: [0x1F, 0x8B]) else { return bytes }
        let capacity = max(1, min(64 << 20, limits.maxDecodedBytes))
        var out = Data(count: capacity)
        let made = out.withUnsafeMutableBytes { target in
            bytes.withUnsafeBytes { source in
                nukesvg_gunzip(source.bindMemory(to: UInt8.self).baseAddress!, source.count, target.bindMemory(to: UInt8.self).baseAddress!, capacity)
            }
        }
        if made == -2 {
            throw SVGLibrary.error(.limitExceeded, .header, "the SVGZ document decompresses to more than \(capacity) bytes")
        }
        guard made >= 0 else { throw SVGLibrary.error(.corrupt, .header, "the SVGZ document is not a valid gzip stream") }
        return out.prefix(Int(made))
    }
}

/// An SVG document's size in (fractional) pixels.
struct SVGSize: Hashable {
    var width: Double
    var height: Double

    /// Rounded up to whole pixels, at least 1 × 1 and at most `Int32.max` a side (which no
    /// limit lets through).
    var rounded: ImageSize { ImageSize.rendered(width: width, height: height, for: nil, contentMode: .aspectFit) }
}

/// One parsed document, owned for the render.
final class SVGDocument {
    private let document: OpaquePointer
    private(set) var intrinsicSize = SVGSize(width: 300, height: 150)
    private(set) var viewBox: [Double]?

    init(bytes: Data, dpi: Double) throws(ImageCodecError) {
        guard let document = nukesvg_document_create() else {
            throw SVGLibrary.error(.internalFailure, "out of memory")
        }
        self.document = document
        let status = bytes.withUnsafeBytes { raw in
            nukesvg_document_load(document, raw.bindMemory(to: UInt8.self).baseAddress!, raw.count, dpi)
        }
        guard status == NUKE_STATUS_OK else {
            throw SVGLibrary.error(status: status, diagnostics: nukesvg_document_diagnostics(document).pointee, context: "parsing the SVG")
        }
        var size = nukesvg_size()
        nukesvg_document_size(document, &size)
        if size.has_viewbox != 0 {
            viewBox = [size.viewbox_x, size.viewbox_y, size.viewbox_width, size.viewbox_height]
        }
        // The width and height attributes; else the viewBox; else 300 × 150, as browsers size an
        // `<img>` whose SVG says nothing.
        if size.has_size != 0, size.width > 0, size.height > 0 {
            intrinsicSize = SVGSize(width: size.width, height: size.height)
        } else if size.has_viewbox != 0, size.viewbox_width > 0, size.viewbox_height > 0 {
            intrinsicSize = SVGSize(width: size.viewbox_width, height: size.viewbox_height)
        }
        guard intrinsicSize.width.isFinite, intrinsicSize.height.isFinite else {
            throw SVGLibrary.error(.corrupt, .header, "the document's size (\(intrinsicSize.width) × \(intrinsicSize.height)) is not a finite number of pixels")
        }
    }

    deinit { nukesvg_document_destroy(document) }

    /// Renders into `buffer` (`size.width × size.height × 4` bytes), straight-alpha RGBA.
    func render(into buffer: UnsafeMutableRawBufferPointer, size: ImageSize, premultiplied: Bool) throws(ImageCodecError) {
        let status = nukesvg_document_render(document, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(size.width), Int32(size.height),
                                             intrinsicSize.width, intrinsicSize.height, premultiplied ? 1 : 0)
        guard status == NUKE_STATUS_OK else {
            throw SVGLibrary.error(status: status, diagnostics: nukesvg_document_diagnostics(document).pointee, context: "rendering the SVG")
        }
    }
}
