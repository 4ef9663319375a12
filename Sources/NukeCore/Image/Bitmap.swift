/// A raster of pixels: width, height, pixel format, row stride and alpha mode.
///
/// A value type with copy-on-write storage: copies are cheap until one of them is mutated.
/// Rows are `bytesPerRow` apart; bytes past `width × bytesPerPixel` in a row are padding.
public struct Bitmap: Sendable, Equatable, CustomStringConvertible {
    public let width: Int
    public let height: Int
    public let pixelFormat: PixelFormat
    public var alphaMode: AlphaMode
    /// Distance in bytes between the starts of two rows.
    public let bytesPerRow: Int
    /// The pixel bytes, `bytesPerRow × height` of them.
    public private(set) var bytes: [UInt8]

    /// Creates a bitmap from existing bytes.
    ///
    /// Misuse — a stride shorter than a row or too few bytes — traps.
    public init(width: Int, height: Int, pixelFormat: PixelFormat, alphaMode: AlphaMode? = nil, bytesPerRow: Int? = nil, bytes: [UInt8]) {
        let stride = bytesPerRow ?? width * pixelFormat.bytesPerPixel
        precondition(width >= 0 && height >= 0, "negative bitmap size")
        precondition(stride >= width * pixelFormat.bytesPerPixel, "bytesPerRow shorter than a row")
        precondition(bytes.count >= stride * height, "too few bytes for the bitmap")
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.alphaMode = alphaMode ?? (pixelFormat.hasAlpha ? .straight : .none)
        self.bytesPerRow = stride
        self.bytes = bytes
    }

    /// Creates a bitmap whose storage `body` fills, without zeroing it first.
    ///
    /// Decoders use this to let a C library write rows straight into the final storage.
    /// - Parameters:
    ///   - body: Receives a buffer of `bytesPerRow × height` bytes and must initialise all of them.
    public init(
        width: Int,
        height: Int,
        pixelFormat: PixelFormat,
        alphaMode: AlphaMode? = nil,
        bytesPerRow: Int? = nil,
        initializingWith body: (UnsafeMutableRawBufferPointer) throws -> Void
    ) rethrows {
        let stride = bytesPerRow ?? width * pixelFormat.bytesPerPixel
        precondition(width >= 0 && height >= 0, "negative bitmap size")
        precondition(stride >= width * pixelFormat.bytesPerPixel, "bytesPerRow shorter than a row")
        let count = stride * height
        let bytes = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = 0
            try body(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
        self.init(width: width, height: height, pixelFormat: pixelFormat, alphaMode: alphaMode, bytesPerRow: stride, bytes: bytes)
    }

    /// An empty (0 × 0) bitmap.
    public static let empty = Bitmap(width: 0, height: 0, pixelFormat: .rgba8, bytes: [])

    /// Calls `body` with the pixel bytes.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    /// Calls `body` with the pixel bytes for writing, copying them first if they are shared.
    public mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeMutableBytes(body)
    }

    /// The sample of `channel` at (`x`, `y`): 0…255 for 8-bit formats, 0…65535 for 16-bit.
    public func sample(x: Int, y: Int, channel: Int) -> Int {
        precondition(x >= 0 && x < width && y >= 0 && y < height && channel >= 0 && channel < pixelFormat.channelCount,
                     "sample out of bounds")
        let offset = y * bytesPerRow + x * pixelFormat.bytesPerPixel + channel * pixelFormat.bytesPerChannel
        if pixelFormat.bitsPerChannel == 8 { return Int(bytes[offset]) }
        return bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) }
    }

    /// The pixel bytes without row padding.
    public var packedBytes: [UInt8] {
        let rowBytes = width * pixelFormat.bytesPerPixel
        if rowBytes == bytesPerRow {
            // No padding: share the storage when there is nothing past the last row.
            return bytes.count == rowBytes * height ? bytes : Array(bytes.prefix(rowBytes * height))
        }
        var out = [UInt8]()
        out.reserveCapacity(rowBytes * height)
        for y in 0..<height {
            out.append(contentsOf: bytes[(y * bytesPerRow)..<(y * bytesPerRow + rowBytes)])
        }
        return out
    }

    /// Bitmaps are equal when their size, format, alpha mode and pixels are; padding is ignored.
    public static func == (lhs: Bitmap, rhs: Bitmap) -> Bool {
        guard lhs.width == rhs.width, lhs.height == rhs.height,
              lhs.pixelFormat == rhs.pixelFormat, lhs.alphaMode == rhs.alphaMode else { return false }
        if lhs.bytesPerRow == rhs.bytesPerRow, lhs.bytes == rhs.bytes { return true }
        return lhs.packedBytes == rhs.packedBytes
    }

    public var description: String {
        "Bitmap(\(width)×\(height) \(pixelFormat), alpha: \(alphaMode.rawValue), bytesPerRow: \(bytesPerRow))"
    }
}
