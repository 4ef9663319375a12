/// Where a decoder that produces an image's rows in order writes them; the core decides what they
/// become, so a plugin writes one path for a decode at full size and a decode to size:
///
/// - when the decode keeps the size decoded (no target size, or one the image does not exceed):
///   the image, in pixel memory from the decode's ``ImageDecodingContext/allocator``; the decoder
///   may write the rows straight into ``buffer`` (in any order) instead of pushing them;
/// - for a decode to size: the rows stream into the announced resampler
///   (``ImageResizing/currentRowResampler``) to the plan's final size as they arrive
///   (``ImageScalePlan``), so the full-size image never exists.
///
/// ``finish()`` returns the image with what the core's drivers need to finish it: the image's
/// stored size (``ImageContainer/UserInfoKey/originalSizeKey``) when the image is smaller.
///
/// ```swift
/// let destination = try ImageRowDestination(size: header.size, pixelFormat: .rgb8, alphaMode: .none, context: context)
/// for row in rows { destination.push(row: row) }
/// let (bitmap, userInfo) = destination.finish()
/// ```
///
/// One decode uses it, on one thread at a time.
public final class ImageRowDestination {
    /// The size the codec decodes at.
    public let size: ImageSize
    /// The layout of the rows.
    public let pixelFormat: PixelFormat
    /// The alpha of the rows.
    public let alphaMode: AlphaMode
    /// The image's memory, ``bytesPerRow`` bytes a row, when the rows are kept at the size
    /// decoded: a decoder that writes here instead of pushing rows writes every byte. `nil` when
    /// they stream into the resampler (push them, top to bottom).
    public let buffer: UnsafeMutableRawBufferPointer?
    /// The stride of ``buffer``'s rows.
    public let bytesPerRow: Int
    private let storage: PixelStorage?
    private let resampler: (any ImageRowResampling)?
    private let originalSize: ImageSize
    private var rowsWritten = 0

    /// Plans where the rows go.
    ///
    /// - Parameters:
    ///   - size: The size the codec decodes at: the image's, or a reduction of its own.
    ///   - pixelFormat: The rows' layout.
    ///   - alphaMode: The rows' alpha.
    ///   - context: The decode: its target size, content mode and allocator.
    ///   - originalSize: The image's stored size, when `size` is a codec's reduction of it.
    ///   - scale: The codec's reduction, when it rounds the size up (``ImageScalePlan/finish(_:scale:)``).
    /// - Throws: The allocator's error when the image is kept at `size`.
    public init(size: ImageSize, pixelFormat: PixelFormat, alphaMode: AlphaMode, context: ImageDecodingContext,
                originalSize: ImageSize? = nil, scale: Double? = nil) throws(ImageCodecError) {
        self.size = size
        self.pixelFormat = pixelFormat
        self.alphaMode = alphaMode
        self.originalSize = originalSize ?? size
        bytesPerRow = size.width * pixelFormat.bytesPerPixel
        if let plan = Self.resamplingPlan(size: size, originalSize: self.originalSize, context: context),
           let make = ImageResizing.currentRowResampler {
            resampler = make(size, pixelFormat, alphaMode, plan.finalSize, scale.map(plan.sourceExtent))
            storage = nil
            buffer = nil
        } else {
            let (stride, count) = try PixelAllocator.layout(width: size.width, height: size.height, pixelFormat: pixelFormat, bytesPerRow: nil)
            let storage = try context.allocator.allocate(byteCount: count)
            precondition(stride == bytesPerRow, "rows are packed")
            self.storage = storage
            resampler = nil
            buffer = storage.withUnsafeMutableBytes { UnsafeMutableRawBufferPointer(rebasing: $0[..<count]) }
        }
    }

    /// Whether the rows stream into the resampler: push them, top to bottom.
    public var isResampling: Bool { resampler != nil }

    /// Whether a destination for rows of `size` would resample them (a decode to size smaller
    /// than `size`): a decoder asks before it chooses how it produces its rows.
    public static func resamples(size: ImageSize, originalSize: ImageSize? = nil, context: ImageDecodingContext) -> Bool {
        resamplingPlan(size: size, originalSize: originalSize ?? size, context: context) != nil
            && ImageResizing.currentRowResampler != nil
    }

    /// The plan when it takes rows of `size` to a smaller final size.
    private static func resamplingPlan(size: ImageSize, originalSize: ImageSize, context: ImageDecodingContext) -> ImageScalePlan? {
        guard let plan = context.scalePlan(for: originalSize), plan.finalSize != size,
              plan.finalSize.width <= size.width, plan.finalSize.height <= size.height else { return nil }
        return plan
    }

    /// Takes the next `count` rows, `bytesPerRow` apart in `rows`, top to bottom.
    public func push(rows: UnsafeRawBufferPointer, count: Int, bytesPerRow stride: Int) {
        let count = min(count, size.height - rowsWritten)
        guard count > 0 else { return }
        if let resampler {
            resampler.push(rows: rows, count: count, bytesPerRow: stride)
        } else if let buffer = buffer?.baseAddress, let source = rows.baseAddress {
            for row in 0..<count {
                (buffer + (rowsWritten + row) * bytesPerRow).copyMemory(from: source + row * stride, byteCount: bytesPerRow)
            }
        }
        rowsWritten += count
    }

    /// Takes the next row.
    public func push(row: UnsafeRawBufferPointer) {
        push(rows: row, count: 1, bytesPerRow: row.count)
    }

    /// The image, at the size decoded or the plan's final size, with the stored size in
    /// `userInfo` when it is smaller (the core's drivers finish the rest and report the scale).
    public func finish() -> (bitmap: Bitmap, userInfo: [ImageContainer.UserInfoKey: any Sendable]) {
        if let buffer, rowsWritten > 0, rowsWritten < size.height {
            // Rows pushed, but not all of them: the rest is blank, not whatever the memory held.
            UnsafeMutableRawBufferPointer(rebasing: buffer[(rowsWritten * bytesPerRow)...]).initializeMemory(as: UInt8.self, repeating: 0)
        }
        let bitmap = resampler?.finish()
            ?? Bitmap(width: size.width, height: size.height, pixelFormat: pixelFormat, alphaMode: alphaMode, bytesPerRow: bytesPerRow, storage: storage!)
        let smaller = bitmap.width != originalSize.width || bitmap.height != originalSize.height
        return (bitmap, smaller ? [.originalSizeKey: originalSize] : [:])
    }
}
