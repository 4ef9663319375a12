import NukeCore
import NukePixels
import NukePluginKit

/// What ``BMPPixelDecoder`` made of a DIB's pixels.
package struct BMPPixels: Sendable {
    /// The pixels, top row first: gray8, rgb8 or rgba8 (``BMPHeader/pixelFormat``; an RLE image
    /// with no pixel left out is rgb8).
    package var bitmap: Bitmap
    /// What the data had wrong that the decoder tolerated.
    package var warnings: [String]
    /// `true` when the pixels have an alpha mask and every alpha value was zero: the image was
    /// made opaque (as browsers and Windows do), or an ICO applies its AND mask instead.
    package var alphaWasZero: Bool
}

/// Decodes a DIB's pixels, described by a ``BMPHeader``, straight into the request's pixel
/// memory: palette indices of 1, 2, 4 and 8 bits, 16- and 32-bit pixels through any masks (each
/// channel scaled to 8 bits with rounding), 24-bit BGR, and RLE4, RLE8 and OS/2 RLE24 with their
/// escapes (pixels a delta or an early end of line skips stay transparent, as in browsers).
package enum BMPPixelDecoder {
    /// Decodes the pixels of `header` from `bytes`.
    ///
    /// - Parameters:
    ///   - header: The DIB's header.
    ///   - bytes: The whole input.
    ///   - end: Where the DIB's data ends.
    ///   - context: The limits (checked before pixel memory is asked for), the allocator,
    ///     cancellation.
    ///   - format: The format errors name (`.bmp`, `.ico`, `.cur`).
    ///   - outputBytesPerPixel: The bytes per pixel the caller ends with, when it converts the
    ///     pixels further (an ICO's rgba8): the limits are checked for the larger of the two.
    ///   - decodesToSize: For a decode to size, an opaque image that is not run-length encoded
    ///     streams its rows into the core's destination, which resamples them, so the full-size
    ///     image never exists (the bitmap returned is the final size); others are decoded whole
    ///     for the core's driver to finish.
    /// - Throws: ``NukeCore/ImageCodecError``: `.limitExceeded`, `.incomplete` when the pixels
    ///   end early, `.cancelled`.
    package static func decode(
        _ header: BMPHeader, bytes: UnsafeRawBufferPointer, end: Int, context: ImageDecodingContext, format: ImageType,
        outputBytesPerPixel: Int = 1, decodesToSize: Bool = false
    ) throws(ImageCodecError) -> BMPPixels {
        let end = min(end, bytes.count)
        let pixelFormat = header.pixelFormat
        let size = ImageSize(width: header.width, height: header.height)
        // Whether the rows stream into the core's destination, resampled as they come.
        let streams = decodesToSize && !header.isRLE && !header.hasAlpha && ImageRowDestination.resamples(size: size, context: context)
        // Streamed rows hold a few rows, not the image: the pixel count and sizes are checked, not its bytes.
        try context.limits.check(
            width: header.width, height: header.height,
            bytesPerPixel: streams ? 0 : max(pixelFormat.bytesPerPixel, outputBytesPerPixel), format: format,
            codec: BMPLibrary.codecName, inputByteCount: streams ? nil : bytes.count
        )
        // Made after the limits: its buffers follow the image's width.
        let destination = streams ? try ImageRowDestination(size: size, pixelFormat: pixelFormat, alphaMode: .none, context: context) : nil
        var warnings = header.warnings
        if header.isRLE {
            guard header.pixelOffset < end else {
                throw BMPLibrary.error(.incomplete, format: format, "the data ends before the pixels at offset \(header.pixelOffset)")
            }
            var bitmap = try context.allocator.makeBitmap(width: header.width, height: header.height, pixelFormat: .rgba8, zeroed: true)
            let bytesPerRow = bitmap.bytesPerRow
            try bitmap.withUnsafeMutableBytes { (out) throws(ImageCodecError) in
                try decodeRLE(header, bytes: bytes, end: end, into: out, bytesPerRow: bytesPerRow, context: context,
                              format: format, warnings: &warnings)
            }
            return BMPPixels(bitmap: opaqueAsRGB(bitmap), warnings: warnings, alphaWasZero: false)
        }
        // The last row may lack its padding.
        let lastRow = (header.width * header.bitCount + 7) / 8   // width × bitCount fits: the stride did
        guard let rows = checkedMultiply(header.stride, header.height - 1), let need = checkedAdd(rows, lastRow),
              let pixelsEnd = checkedAdd(header.pixelOffset, need) else {
            throw BMPLibrary.error(.corrupt, format: format, "the pixels of a \(header.width)×\(header.height) image overflow")
        }
        guard pixelsEnd <= end else {
            throw BMPLibrary.error(.incomplete, format: format,
                                   "expected \(need) bytes of pixels at offset \(header.pixelOffset), the data has \(max(0, end - header.pixelOffset))")
        }
        var outOfRange = false
        var alphaSeen: UInt32 = 0
        let tables = MaskTables(header.masks)
        /// Row `y` (top first) into `dst`.
        func decodeRow(_ y: Int, source: UnsafeRawPointer, into dst: UnsafeMutablePointer<UInt8>) {
            let fileRow = header.isTopDown ? y : header.height - 1 - y
            let src = (source + header.pixelOffset + fileRow * header.stride).assumingMemoryBound(to: UInt8.self)
            switch header.bitCount {
            case 1, 2, 4, 8:
                if decodeIndexed(header, src: src, dst: dst, gray: pixelFormat == .gray8) { outOfRange = true }
            case 24:
                swapBGR(src: src, dst: dst, width: header.width)
            default:
                alphaSeen |= tables.decodeRow(src: src, dst: dst, width: header.width, bitCount: header.bitCount, alpha: header.hasAlpha)
            }
        }
        if let destination, let source = bytes.baseAddress {
            let rowBytes = header.width * pixelFormat.bytesPerPixel
            let row = UnsafeMutableRawBufferPointer.allocate(byteCount: rowBytes, alignment: 16)
            defer { row.deallocate() }
            guard let target = row.baseAddress else { throw BMPLibrary.error(.internalFailure, format: format, "no row buffer") }
            for y in 0..<header.height {
                if y & 31 == 0 { try BMPLibrary.checkCancellation(context, format: format) }
                decodeRow(y, source: source, into: target.assumingMemoryBound(to: UInt8.self))
                destination.push(row: UnsafeRawBufferPointer(row))
            }
            if outOfRange { warnings.append("palette indices past the palette's \(header.paletteCount) entries (drawn black)") }
            return BMPPixels(bitmap: destination.finish().bitmap, warnings: warnings, alphaWasZero: false)
        }
        var bitmap = try context.allocator.makeBitmap(width: header.width, height: header.height, pixelFormat: pixelFormat, zeroed: false)
        let bytesPerRow = bitmap.bytesPerRow
        try bitmap.withUnsafeMutableBytes { (out) throws(ImageCodecError) in
            guard let source = bytes.baseAddress, let target = out.baseAddress else { return }
            for y in 0..<header.height {
                if y & 31 == 0 { try BMPLibrary.checkCancellation(context, format: format) }
                decodeRow(y, source: source, into: (target + y * bytesPerRow).assumingMemoryBound(to: UInt8.self))
            }
        }
        if outOfRange { warnings.append("palette indices past the palette's \(header.paletteCount) entries (drawn black)") }
        let alphaWasZero = header.hasAlpha && alphaSeen == 0
        if alphaWasZero {
            // Every alpha value zero: the masks' alpha is not used by whoever wrote the file.
            bitmap.withUnsafeMutableBytes { out in
                for y in 0..<header.height {
                    for x in 0..<header.width { out[y * bytesPerRow + 4 * x + 3] = 255 }
                }
            }
        }
        return BMPPixels(bitmap: bitmap, warnings: warnings, alphaWasZero: alphaWasZero)
    }

    /// One row of BGR pixels as RGB: four pixels (three 32-bit words) at a time, the rest one by one.
    @inline(__always)
    private static func swapBGR(src: UnsafePointer<UInt8>, dst: UnsafeMutablePointer<UInt8>, width: Int) {
        let from = UnsafeRawPointer(src), to = UnsafeMutableRawPointer(dst)
        var x = 0
        while x + 4 <= width {
            let at = 3 * x
            let w0 = UInt32(littleEndian: from.loadUnaligned(fromByteOffset: at, as: UInt32.self))      // B0 G0 R0 B1
            let w1 = UInt32(littleEndian: from.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self))  // G1 R1 B2 G2
            let w2 = UInt32(littleEndian: from.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self))  // R2 B3 G3 R3
            let o0 = (w0 >> 16 & 0xFF) | (w0 & 0xFF00) | (w0 & 0xFF) << 16 | (w1 >> 8 & 0xFF) << 24   // R0 G0 B0 R1
            let o1 = (w1 & 0xFF) | (w0 >> 24) << 8 | (w2 & 0xFF) << 16 | (w1 >> 24) << 24             // G1 B1 R2 G2
            let o2 = (w1 >> 16 & 0xFF) | (w2 >> 24) << 8 | (w2 & 0xFF_0000) | (w2 >> 8 & 0xFF) << 24  // B2 R3 G3 B3
            to.storeBytes(of: o0.littleEndian, toByteOffset: at, as: UInt32.self)
            to.storeBytes(of: o1.littleEndian, toByteOffset: at + 4, as: UInt32.self)
            to.storeBytes(of: o2.littleEndian, toByteOffset: at + 8, as: UInt32.self)
            x += 4
        }
        while x < width {
            dst[3 * x] = src[3 * x + 2]
            dst[3 * x + 1] = src[3 * x + 1]
            dst[3 * x + 2] = src[3 * x]
            x += 1
        }
    }

    /// One row of palette indices; returns `true` when an index is past the palette.
    @inline(__always)
    private static func decodeIndexed(_ header: BMPHeader, src: UnsafePointer<UInt8>, dst: UnsafeMutablePointer<UInt8>, gray: Bool) -> Bool {
        let bits = header.bitCount
        let perByte = 8 / bits
        let mask = UInt8((1 << bits) - 1)
        let count = header.paletteCount
        var outOfRange = false
        header.palette.withUnsafeBufferPointer { palette in
            for x in 0..<header.width {
                let index: Int
                if bits == 8 {
                    index = Int(src[x])
                } else {
                    let byte = src[x / perByte]
                    let shift = 8 - bits * (x % perByte + 1)
                    index = Int((byte >> UInt8(shift)) & mask)
                }
                if index >= count { outOfRange = true }
                if gray {
                    dst[x] = palette[3 * index]
                } else {
                    dst[3 * x] = palette[3 * index]
                    dst[3 * x + 1] = palette[3 * index + 1]
                    dst[3 * x + 2] = palette[3 * index + 2]
                }
            }
        }
        return outOfRange
    }

    /// An RLE bitmap with no transparent pixel as rgb8, compacted in place (the row stride stays).
    private static func opaqueAsRGB(_ bitmap: Bitmap) -> Bitmap {
        var bitmap = bitmap
        let opaque = bitmap.withUnsafeBytes { raw -> Bool in
            for y in 0..<bitmap.height {
                let row = y * bitmap.bytesPerRow
                for x in 0..<bitmap.width where raw[row + 4 * x + 3] != 255 { return false }
            }
            return true
        }
        guard opaque else { return bitmap }
        let bytesPerRow = bitmap.bytesPerRow, width = bitmap.width, height = bitmap.height
        bitmap.withUnsafeMutableBytes { raw in
            for y in 0..<height {
                let row = y * bytesPerRow
                for x in 0..<width {
                    raw[row + 3 * x] = raw[row + 4 * x]
                    raw[row + 3 * x + 1] = raw[row + 4 * x + 1]
                    raw[row + 3 * x + 2] = raw[row + 4 * x + 2]
                }
            }
        }
        return Bitmap(width: bitmap.width, height: bitmap.height, pixelFormat: .rgb8, bytesPerRow: bytesPerRow, storage: bitmap.storage)
    }

    /// Runs RLE4, RLE8 or RLE24 data into zeroed RGBA rows.
    private static func decodeRLE(
        _ header: BMPHeader, bytes b: UnsafeRawBufferPointer, end: Int, into out: UnsafeMutableRawBufferPointer, bytesPerRow: Int,
        context: ImageDecodingContext, format: ImageType, warnings: inout [String]
    ) throws(ImageCodecError) {
        let width = header.width, height = header.height
        var i = header.pixelOffset
        var x = 0, row = 0
        var clipped = false, outOfRange = false, ended = false
        let palette = header.palette, count = header.paletteCount
        @inline(__always) func put(_ r: UInt8, _ g: UInt8, _ bl: UInt8) {
            guard x < width else { clipped = true; x += 1; return }
            let y = header.isTopDown ? row : height - 1 - row
            let at = y * bytesPerRow + 4 * x
            out[at] = r
            out[at + 1] = g
            out[at + 2] = bl
            out[at + 3] = 255
            x += 1
        }
        @inline(__always) func put(index: Int) {
            if index >= count { outOfRange = true }
            put(palette[3 * index], palette[3 * index + 1], palette[3 * index + 2])
        }
        var rowsSinceCheck = 0
        decoding: while row < height {
            if rowsSinceCheck >= 32 {
                rowsSinceCheck = 0
                try BMPLibrary.checkCancellation(context, format: format)
            }
            guard i + 2 <= end else { break }
            let n = Int(b[i]), c = Int(b[i + 1])
            if n > 0 {
                switch header.compression {
                case .rle8:
                    for _ in 0..<n { put(index: c) }
                    i += 2
                case .rle4:
                    for k in 0..<n { put(index: k & 1 == 0 ? c >> 4 : c & 15) }
                    i += 2
                default:
                    guard i + 4 <= end else { break decoding }
                    for _ in 0..<n { put(b[i + 3], b[i + 2], b[i + 1]) }
                    i += 4
                }
                continue
            }
            i += 2
            switch c {
            case 0:
                x = 0
                row += 1
                rowsSinceCheck += 1
            case 1:
                ended = true
                break decoding
            case 2:
                guard i + 2 <= end else { break decoding }
                x += Int(b[i])
                row += Int(b[i + 1])
                i += 2
            default:
                let byteCount: Int
                switch header.compression {
                case .rle8: byteCount = c
                case .rle4: byteCount = (c + 1) / 2
                default: byteCount = 3 * c
                }
                guard i + byteCount <= end else { break decoding }
                for k in 0..<c {
                    switch header.compression {
                    case .rle8: put(index: Int(b[i + k]))
                    case .rle4: put(index: k & 1 == 0 ? Int(b[i + k / 2]) >> 4 : Int(b[i + k / 2]) & 15)
                    default: put(b[i + 3 * k + 2], b[i + 3 * k + 1], b[i + 3 * k])
                    }
                }
                i += (byteCount + 1) & ~1
            }
        }
        if !ended && row < height { warnings.append("the RLE data ends before its end-of-bitmap marker; the rest is transparent") }
        if clipped { warnings.append("RLE runs past the end of a row (clipped)") }
        if outOfRange { warnings.append("palette indices past the palette's \(count) entries (drawn black)") }
    }
}

/// 16- and 32-bit pixels through their masks: per channel, the masked bits scaled to 8 bits with
/// rounding through a table (masks wider than 16 bits lose their lowest bits first).
struct MaskTables {
    struct Channel {
        let mask: UInt32
        let shift: UInt32
        let table: [UInt8]

        init(_ mask: UInt32, absent: UInt8) {
            self.mask = mask
            guard mask != 0 else {
                shift = 0
                table = [absent]
                return
            }
            let low = UInt32(mask.trailingZeroBitCount)
            let bits = 32 - mask.leadingZeroBitCount - Int(low)
            let kept = min(bits, 16)
            shift = low + UInt32(bits - kept)
            let maximum = (1 << kept) - 1
            table = (0...maximum).map { UInt8((($0 * 255) + maximum / 2) / maximum) }
        }
    }

    let red: Channel, green: Channel, blue: Channel, alpha: Channel
    /// The standard 8-bit masks (`0xFF0000`, `0xFF00`, `0xFF`, with or without `0xFF000000`).
    let isBGRA8: Bool

    init(_ masks: (red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32)) {
        red = Channel(masks.red, absent: 0)
        green = Channel(masks.green, absent: 0)
        blue = Channel(masks.blue, absent: 0)
        alpha = Channel(masks.alpha, absent: 255)
        isBGRA8 = masks.red == 0xFF_0000 && masks.green == 0xFF00 && masks.blue == 0xFF && (masks.alpha == 0 || masks.alpha == 0xFF00_0000)
    }

    /// Decodes one row into RGB (or RGBA when `alpha`); returns the OR of the alpha values.
    @inline(__always)
    func decodeRow(src: UnsafePointer<UInt8>, dst: UnsafeMutablePointer<UInt8>, width: Int, bitCount: Int, alpha withAlpha: Bool) -> UInt32 {
        var seen: UInt8 = 0
        if bitCount == 32 && isBGRA8 {
            if withAlpha {
                for x in 0..<width {
                    dst[4 * x] = src[4 * x + 2]
                    dst[4 * x + 1] = src[4 * x + 1]
                    dst[4 * x + 2] = src[4 * x]
                    dst[4 * x + 3] = src[4 * x + 3]
                    seen |= src[4 * x + 3]
                }
            } else {
                for x in 0..<width {
                    dst[3 * x] = src[4 * x + 2]
                    dst[3 * x + 1] = src[4 * x + 1]
                    dst[3 * x + 2] = src[4 * x]
                }
            }
            return UInt32(seen)
        }
        red.table.withUnsafeBufferPointer { r in
            green.table.withUnsafeBufferPointer { g in
                blue.table.withUnsafeBufferPointer { b in
                    self.alpha.table.withUnsafeBufferPointer { a in
                        let channels = self.alpha.mask != 0 && withAlpha ? 4 : 3
                        for x in 0..<width {
                            let v: UInt32
                            if bitCount == 16 {
                                v = UInt32(src[2 * x]) | UInt32(src[2 * x + 1]) << 8
                            } else {
                                v = UInt32(src[4 * x]) | UInt32(src[4 * x + 1]) << 8 | UInt32(src[4 * x + 2]) << 16 | UInt32(src[4 * x + 3]) << 24
                            }
                            let o = channels * x
                            dst[o] = r[Int((v & red.mask) >> red.shift)]
                            dst[o + 1] = g[Int((v & green.mask) >> green.shift)]
                            dst[o + 2] = b[Int((v & blue.mask) >> blue.shift)]
                            if channels == 4 {
                                let value = a[Int((v & alpha.mask) >> alpha.shift)]
                                dst[o + 3] = value
                                seen |= value
                            }
                        }
                    }
                }
            }
        }
        return UInt32(seen)
    }
}
