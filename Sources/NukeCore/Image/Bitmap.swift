#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A raster of pixels: width, height, pixel format, row stride and alpha mode.
///
/// A value type with copy-on-write storage: copies are cheap until one of them is mutated.
/// Rows are `bytesPerRow` apart; bytes past `width × bytesPerPixel` in a row are padding.
///
/// The pixels live in a ``PixelStorage``: heap memory, a pooled buffer, memory mapped from
/// another process or a caller's buffer. Read them in place with ``withUnsafeBytes(_:)`` or
/// ``withUnsafeRow(_:_:)``; ``bytes`` is a copy.
public struct Bitmap: Sendable, Equatable, CustomStringConvertible {
    /// The width in pixels.
    public let width: Int
    /// The height in pixels (rows).
    public let height: Int
    /// The channels and bits per channel of each pixel.
    public let pixelFormat: PixelFormat
    /// Whether alpha is straight, premultiplied or absent.
    public var alphaMode: AlphaMode
    /// Distance in bytes between the starts of two rows.
    public let bytesPerRow: Int
    /// The memory holding the pixels: the first ``byteCount`` bytes are the bitmap's.
    ///
    /// Shared between copies of the bitmap until one of them is mutated.
    public private(set) var storage: PixelStorage

    /// The number of pixel bytes, `bytesPerRow × height`.
    public var byteCount: Int { bytesPerRow * height }

    /// A copy of the pixel bytes, `bytesPerRow × height` of them.
    ///
    /// Each read copies the whole bitmap into a new array: in code that runs per image, read
    /// in place with ``withUnsafeBytes(_:)`` or ``withUnsafeRow(_:_:)`` instead.
    public var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// Creates a bitmap over `storage`, without copying it.
    ///
    /// The bitmap uses the first `bytesPerRow × height` bytes; the storage is released (and its
    /// deallocator called) when the last bitmap using it goes away. Misuse — a stride shorter
    /// than a row or a storage too small — traps.
    public init(width: Int, height: Int, pixelFormat: PixelFormat, alphaMode: AlphaMode? = nil, bytesPerRow: Int? = nil, storage: PixelStorage) {
        let stride = bytesPerRow ?? width * pixelFormat.bytesPerPixel
        precondition(width >= 0 && height >= 0, "negative bitmap size")
        precondition(stride >= width * pixelFormat.bytesPerPixel, "bytesPerRow shorter than a row")
        precondition(storage.byteCount >= stride * height, "storage too small for the bitmap")
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.alphaMode = alphaMode ?? (pixelFormat.hasAlpha ? .straight : .none)
        self.bytesPerRow = stride
        self.storage = storage
    }

    /// Creates a bitmap from existing bytes, copying the first `bytesPerRow × height` of them
    /// into new heap storage.
    ///
    /// Misuse — a stride shorter than a row or too few bytes — traps.
    public init(width: Int, height: Int, pixelFormat: PixelFormat, alphaMode: AlphaMode? = nil, bytesPerRow: Int? = nil, bytes: [UInt8]) {
        let stride = bytesPerRow ?? width * pixelFormat.bytesPerPixel
        precondition(width >= 0 && height >= 0, "negative bitmap size")
        precondition(stride >= width * pixelFormat.bytesPerPixel, "bytesPerRow shorter than a row")
        precondition(bytes.count >= stride * height, "too few bytes for the bitmap")
        self.init(width: width, height: height, pixelFormat: pixelFormat, alphaMode: alphaMode, bytesPerRow: stride) { buffer in
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<buffer.count])) }
        }
    }

    /// Creates a bitmap whose heap storage `body` fills, without zeroing it first.
    ///
    /// Decoders use this to let a C library write rows straight into the final storage.
    /// ``PixelAllocator/makeBitmap(width:height:pixelFormat:alphaMode:bytesPerRow:initializingWith:)``
    /// does the same with memory from an allocator.
    /// - Parameters:
    ///   - width: The width in pixels.
    ///   - height: The height in pixels.
    ///   - pixelFormat: The pixels' channels and depth.
    ///   - alphaMode: `nil` for straight alpha when the format has alpha, else none.
    ///   - bytesPerRow: The row stride; `width × bytesPerPixel` when `nil`.
    ///   - body: Receives a buffer of `bytesPerRow × height` bytes and must initialise all of them.
    public init<E: Error>(
        width: Int,
        height: Int,
        pixelFormat: PixelFormat,
        alphaMode: AlphaMode? = nil,
        bytesPerRow: Int? = nil,
        initializingWith body: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(E) {
        let stride = bytesPerRow ?? width * pixelFormat.bytesPerPixel
        precondition(width >= 0 && height >= 0, "negative bitmap size")
        precondition(stride >= width * pixelFormat.bytesPerPixel, "bytesPerRow shorter than a row")
        let storage = PixelStorage.allocate(byteCount: stride * height)
        try storage.withUnsafeMutableBytes(body)
        self.init(width: width, height: height, pixelFormat: pixelFormat, alphaMode: alphaMode, bytesPerRow: stride, storage: storage)
    }

    /// An empty (0 × 0) bitmap.
    public static let empty = Bitmap(width: 0, height: 0, pixelFormat: .rgba8, storage: .allocate(byteCount: 0))

    /// Calls `body` with the pixel bytes (`bytesPerRow × height` of them), in place.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage.baseAddress, count: byteCount))
    }

    /// Calls `body` with the pixel bytes for writing, copying them first if they are shared.
    ///
    /// When this value is the storage's only user the bytes are written in place, wherever they
    /// live (pool, mapped or caller memory); otherwise they are first copied to new heap storage.
    public mutating func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        makeStorageUnique()
        return try body(UnsafeMutableRawBufferPointer(start: storage.baseAddress, count: byteCount))
    }

    /// Calls `body` with row `y`'s pixel bytes (`width × bytesPerPixel` of them, no padding), in place.
    public func withUnsafeRow<R, E: Error>(_ y: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        precondition(y >= 0 && y < height, "row out of bounds")
        return try body(UnsafeRawBufferPointer(start: storage.baseAddress + y * bytesPerRow, count: width * pixelFormat.bytesPerPixel))
    }

    /// Calls `body` with row `y`'s pixel bytes for writing, copying the bitmap first if it is shared.
    public mutating func withUnsafeMutableRow<R, E: Error>(_ y: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        precondition(y >= 0 && y < height, "row out of bounds")
        makeStorageUnique()
        return try body(UnsafeMutableRawBufferPointer(start: storage.baseAddress + y * bytesPerRow, count: width * pixelFormat.bytesPerPixel))
    }

    /// A copy of row `y`'s pixel bytes, without padding.
    ///
    /// ``withUnsafeRow(_:_:)`` reads the row in place, without the copy.
    public func row(_ y: Int) -> [UInt8] {
        withUnsafeRow(y) { Array($0) }
    }

    /// The copy-on-write step: gives this value storage of its own before it is written.
    private mutating func makeStorageUnique() {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy(byteCount: byteCount)
        }
    }

    /// The sample of `channel` at (`x`, `y`): 0…255 for 8-bit formats, 0…65535 for 16-bit.
    public func sample(x: Int, y: Int, channel: Int) -> Int {
        precondition(x >= 0 && x < width && y >= 0 && y < height && channel >= 0 && channel < pixelFormat.channelCount,
                     "sample out of bounds")
        let offset = y * bytesPerRow + x * pixelFormat.bytesPerPixel + channel * pixelFormat.bytesPerChannel
        return withUnsafeBytes { bytes in
            pixelFormat.bitsPerChannel == 8 ? Int(bytes[offset]) : Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
        }
    }

    /// A copy of the pixel bytes without row padding.
    public var packedBytes: [UInt8] {
        let rowBytes = width * pixelFormat.bytesPerPixel
        return withUnsafeBytes { bytes in
            if rowBytes == bytesPerRow { return Array(bytes) }
            return [UInt8](unsafeUninitializedCapacity: rowBytes * height) { out, initialized in
                let out = UnsafeMutableRawBufferPointer(out)
                for y in 0..<height {
                    let start = y * bytesPerRow
                    UnsafeMutableRawBufferPointer(rebasing: out[(y * rowBytes)..<((y + 1) * rowBytes)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + rowBytes)]))
                }
                initialized = rowBytes * height
            }
        }
    }

    /// Bitmaps are equal when their size, format, alpha mode and pixels are; padding is ignored.
    public static func == (lhs: Bitmap, rhs: Bitmap) -> Bool {
        guard lhs.width == rhs.width, lhs.height == rhs.height,
              lhs.pixelFormat == rhs.pixelFormat, lhs.alphaMode == rhs.alphaMode else { return false }
        if lhs.storage === rhs.storage, lhs.bytesPerRow == rhs.bytesPerRow { return true }
        let rowBytes = lhs.width * lhs.pixelFormat.bytesPerPixel
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in
                guard let a = a.baseAddress, let b = b.baseAddress else { return true }
                if lhs.bytesPerRow == rhs.bytesPerRow, lhs.bytesPerRow == rowBytes {
                    return memcmp(a, b, lhs.byteCount) == 0
                }
                for y in 0..<lhs.height where memcmp(a + y * lhs.bytesPerRow, b + y * rhs.bytesPerRow, rowBytes) != 0 {
                    return false
                }
                return true
            }
        }
    }

    public var description: String {
        "Bitmap(\(width)×\(height) \(pixelFormat), alpha: \(alphaMode.rawValue), bytesPerRow: \(bytesPerRow))"
    }
}
