/// Where decoders get pixel memory: the heap, a pool (NukePixels' `PixelBufferPool`), shared memory, or any
/// source the caller supplies.
///
/// Decoders allocate through ``ImageDecodingContext/allocator`` rather than directly, so that the
/// caller decides where pixels live:
///
/// ```swift
/// let pool = PixelBufferPool(idleByteBudget: 256 << 20)     // NukePixels
/// let context = ImageDecodingContext(data: data, allocator: .pool(pool))
/// ```
///
/// A custom allocator returns a ``PixelStorage`` of at least the requested size; it throws an
/// ``ImageCodecError`` saying why when the memory cannot be had (a shared-memory region that
/// cannot be created, for example).
public struct PixelAllocator: Sendable {
    private let body: @Sendable (_ byteCount: Int, _ zeroed: Bool) throws(ImageCodecError) -> PixelStorage

    /// Creates an allocator from a closure that returns storage of at least `byteCount` bytes,
    /// filled with zeros when `zeroed` is `true`.
    public init(_ allocate: @escaping @Sendable (_ byteCount: Int, _ zeroed: Bool) throws(ImageCodecError) -> PixelStorage) {
        self.body = allocate
    }

    /// Heap memory, freed when the last bitmap using it is released (the default).
    ///
    /// On Linux, buffers of ``largeBufferThreshold`` or more are mapped on their own and marked
    /// for transparent huge pages (`madvise(MADV_HUGEPAGE)`): a 12 MP RGB decode writes 36 MB of
    /// fresh memory, some 9,000 page faults in 4 KiB pages and 18 in 2 MiB ones (a 12 MP BMP
    /// decodes 1.6 times as fast). Where the kernel has THP disabled the advice is ignored and the
    /// mapping behaves as the heap; fresh anonymous mappings are already zero.
    public static let heap = PixelAllocator { (byteCount, zeroed) throws(ImageCodecError) in
        if byteCount >= largeBufferThreshold, let storage = PixelStorage.mappedForHugePages(byteCount: byteCount) { return storage }
        guard let storage = PixelStorage.allocateIfPossible(byteCount: byteCount, zeroed: zeroed) else {
            throw ImageCodecError(.limitExceeded, stage: .decoding, message: "the system has no \(byteCount) bytes for the pixels")
        }
        return storage
    }

    /// Buffers of this size or more come from their own mapping (``heap``): 8 MiB.
    public static let largeBufferThreshold = 8 << 20

    /// Returns storage for `byteCount` bytes.
    ///
    /// - Parameters:
    ///   - byteCount: The number of bytes needed (≥ 0).
    ///   - zeroed: `true` to get zeros; otherwise the contents are undefined.
    /// - Throws: Whatever the allocator's closure throws when it cannot provide the memory.
    public func allocate(byteCount: Int, zeroed: Bool = false) throws(ImageCodecError) -> PixelStorage {
        precondition(byteCount >= 0, "negative byte count")
        let storage = try body(byteCount, zeroed)
        precondition(storage.byteCount >= byteCount, "the allocator returned \(storage.byteCount) bytes for a request of \(byteCount)")
        return storage
    }

    /// Returns a bitmap over new storage, zeroed or with undefined contents.
    ///
    /// - Parameters:
    ///   - width: The width in pixels.
    ///   - height: The height in pixels.
    ///   - pixelFormat: The pixels' channels and depth.
    ///   - alphaMode: `nil` for straight alpha when the format has alpha, else none.
    ///   - bytesPerRow: The row stride; `width × bytesPerPixel` when `nil`.
    ///   - zeroed: `true` to start from zeros; `false` when the caller writes every byte.
    /// - Throws: Whatever the allocator throws.
    public func makeBitmap(
        width: Int,
        height: Int,
        pixelFormat: PixelFormat,
        alphaMode: AlphaMode? = nil,
        bytesPerRow: Int? = nil,
        zeroed: Bool = true
    ) throws(ImageCodecError) -> Bitmap {
        let (stride, count) = try Self.layout(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow)
        let storage = try allocate(byteCount: count, zeroed: zeroed)
        return Bitmap(width: width, height: height, pixelFormat: pixelFormat, alphaMode: alphaMode, bytesPerRow: stride, storage: storage)
    }

    /// Returns a bitmap over new storage that `body` fills, without zeroing it first.
    ///
    /// - Parameters:
    ///   - width: The width in pixels.
    ///   - height: The height in pixels.
    ///   - pixelFormat: The pixels' channels and depth.
    ///   - alphaMode: `nil` for straight alpha when the format has alpha, else none.
    ///   - bytesPerRow: The row stride; `width × bytesPerPixel` when `nil`.
    ///   - body: Receives a buffer of `bytesPerRow × height` bytes and must initialise all of them.
    /// - Throws: Whatever the allocator or `body` throws.
    public func makeBitmap(
        width: Int,
        height: Int,
        pixelFormat: PixelFormat,
        alphaMode: AlphaMode? = nil,
        bytesPerRow: Int? = nil,
        initializingWith body: (UnsafeMutableRawBufferPointer) throws(ImageCodecError) -> Void
    ) throws(ImageCodecError) -> Bitmap {
        var bitmap = try makeBitmap(width: width, height: height, pixelFormat: pixelFormat, alphaMode: alphaMode, bytesPerRow: bytesPerRow, zeroed: false)
        try bitmap.withUnsafeMutableBytes(body)
        return bitmap
    }

    /// The row stride and the byte count of a bitmap; `.limitExceeded` when they do not fit in an `Int`.
    static func layout(width: Int, height: Int, pixelFormat: PixelFormat, bytesPerRow: Int?) throws(ImageCodecError) -> (stride: Int, count: Int) {
        precondition(width >= 0 && height >= 0, "negative bitmap size")
        let (row, rowOverflow) = width.multipliedReportingOverflow(by: pixelFormat.bytesPerPixel)
        let stride = bytesPerRow ?? row
        let (count, overflow) = stride.multipliedReportingOverflow(by: height)
        guard !rowOverflow, !overflow else {
            throw ImageCodecError(.limitExceeded, stage: .decoding, message: "a \(width)×\(height) bitmap does not fit in memory")
        }
        precondition(stride >= row, "bytesPerRow shorter than a row")
        return (stride, count)
    }
}
