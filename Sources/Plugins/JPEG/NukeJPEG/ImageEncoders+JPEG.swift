#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
internal import CJPEGShim

extension ImageEncoders {
    /// Encodes JPEG with libjpeg-turbo.
    ///
    /// Gray images (``PixelFormat/gray8``, ``PixelFormat/gray16``, and gray with alpha) are
    /// written as grayscale JPEG, everything else as YCbCr from ``PixelFormat/rgb8``: 4:2:0
    /// below quality 0.9, 4:4:4 (full-resolution chroma) from 0.9 up.
    /// JPEG has no alpha: alpha is dropped (premultiplied pixels are un-premultiplied first),
    /// and 16-bit samples are rounded to 8 bits. The ICC profile is embedded when
    /// ``ImageEncodingOptions/preservesColorProfile`` is set, and the image's EXIF block is
    /// written back as APP1 so the orientation survives; an image with an orientation but no
    /// EXIF block gets a minimal one holding just the orientation.
    public struct JPEG: ImageEncoding, Sendable {
        /// Quality (0…1 → libjpeg's 0…100), progressive output, colour profile.
        public var options: ImageEncodingOptions

        public init(options: ImageEncodingOptions = ImageEncodingOptions()) {
            self.options = options
        }

        /// Encodes `image` (its first frame).
        ///
        /// The corresponding libjpeg functions are `jpeg_start_compress`, `jpeg_write_scanlines`
        /// and `jpeg_finish_compress`, writing to `jpeg_mem_dest`.
        /// - Throws: ``ImageCodecError`` `.encodingFailed` with libjpeg's message.
        public func encode(_ image: Image) throws -> Data {
            func failure(_ message: String) -> ImageCodecError {
                ImageCodecError(.encodingFailed, stage: .encoding, format: .jpeg, codec: JPEGLibrary.codec, message: message)
            }
            let source = image.bitmap
            guard source.width > 0, source.height > 0 else {
                throw failure("cannot encode an empty \(source.width)×\(source.height) image")
            }
            let bitmap = source.converted(to: source.pixelFormat.isGray ? .gray8 : .rgb8)
            let exif = try exifSegment(for: image)
            guard exif.map({ $0.count <= 65_533 }) ?? true else {
                throw failure("the EXIF block of \(exif?.count ?? 0) bytes does not fit in one APP1 segment (65,533 bytes)")
            }
            let icc = options.preservesColorProfile ? image.colorInfo.iccProfile.flatMap { $0.isEmpty ? nil : $0 } : nil
            let quality = Int32((min(max(options.quality, 0), 1) * 100).rounded())

            var output: UnsafeMutablePointer<UInt8>?
            var count = 0
            var diagnostics = nuke_diagnostics()
            let status = bitmap.withUnsafeBytes { pixels in
                withOptionalBytes(icc) { iccBytes in
                    withOptionalBytes(exif) { exifBytes in
                        var params = nukejpeg_encode_params(
                            width: UInt32(clamping: bitmap.width), height: UInt32(clamping: bitmap.height),
                            components: Int32(bitmap.pixelFormat.channelCount), bytes_per_row: bitmap.bytesPerRow,
                            quality: quality, progressive: options.isProgressive ? 1 : 0, full_chroma: quality >= 90 ? 1 : 0,
                            icc: iccBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), icc_count: iccBytes.count,
                            exif: exifBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), exif_count: exifBytes.count
                        )
                        return nukejpeg_encode(&params, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                               &output, &count, &diagnostics)
                    }
                }
            }
            guard status == NUKE_STATUS_OK, let output else {
                nukejpeg_buffer_free(output)
                let text = withUnsafeBytes(of: &diagnostics.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                throw failure(text.isEmpty ? "libjpeg failed with status \(status.rawValue)" : text)
            }
            return Data(bytesNoCopy: output, count: count, deallocator: .custom { bytes, _ in nukejpeg_buffer_free(bytes) })
        }

        /// The APP1 payload: `Exif\0\0` and the image's EXIF block, or a minimal block with
        /// just the orientation when the image has no EXIF but is not upright.
        private func exifSegment(for image: Image) throws -> Data? {
            let prefix = Data("Exif".utf8) + Data([0, 0])
            if let exif = image.exif, !exif.isEmpty {
                return exif.starts(with: prefix) ? exif : prefix + exif
            }
            guard image.orientation != .up else { return nil }
            // Big-endian TIFF header, IFD0 with one entry: Orientation (SHORT, 1).
            let tiff: [UInt8] = [
                0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08,
                0x00, 0x01,
                0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, image.orientation.rawValue, 0x00, 0x00,
                0x00, 0x00, 0x00, 0x00,
            ]
            return prefix + Data(tiff)
        }
    }
}

/// Calls `body` with the bytes of `data`, or an empty buffer when it is `nil`.
private func withOptionalBytes<R>(_ data: Data?, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    guard let data else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
    return data.withUnsafeBytes(body)
}
