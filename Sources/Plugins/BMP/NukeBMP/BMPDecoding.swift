#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePixels
import NukePluginKit

/// Decodes a complete BMP file: the headers, the limits, then the pixels straight into the
/// request's pixel memory (``BMPPixelDecoder``); reduced to the target size through the plan
/// (opaque rows streamed into its resampler: the full-size image never exists).
struct BMPDecoding {
    let context: ImageDecodingContext

    func decode(_ data: Data) throws(ImageCodecError) -> ImageContainer {
        let (header, pixels, icc) = try data.withBytes { (bytes) throws(ImageCodecError) in
            let header = try BMPHeaderParser.read(bytes).get(BMPLibrary.self, part: "headers", byteCount: bytes.count)
            let pixels = try BMPPixelDecoder.decode(header, bytes: bytes, end: bytes.count, context: context, format: .bmp, decodesToSize: true)
            let icc = header.iccRange.map { Data(bytes[$0]) }
            return (header, pixels, icc)
        }
        let warnings = pixels.warnings.first.map { ImageDecodingWarnings(count: pixels.warnings.count, first: $0) }
        let bitmap = pixels.bitmap
        var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [
            .isProgressiveKey: false, .bmpHeaderSizeKey: header.headerSize, .bmpBitCountKey: header.bitCount,
            .bmpCompressionKey: header.compression.rawValue,
        ]
        if let warnings { userInfo[.warningsKey] = warnings }
        // Opaque rows were streamed into the core's destination; the core's driver resizes the rest.
        userInfo[.originalSizeKey] = ImageSize(width: header.width, height: header.height)
        let image = Image(bitmap: bitmap, colorInfo: ColorInfo(iccProfile: icc))
        return ImageContainer(image: image, type: .bmp, isPreview: false, userInfo: userInfo)
    }
}
