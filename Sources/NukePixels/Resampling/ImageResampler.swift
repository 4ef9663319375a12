import NukeCore

/// Shrinks an image fed to it row by row, so the full-size image never has to exist.
///
/// Decoders that produce rows in order (top to bottom) push them as they come; the resampler
/// keeps a few rows of state and ``finish()`` returns the resized bitmap:
///
/// ```swift
/// let size = header.size.fitted(to: ImageSize(width: 256, height: 256))
/// let resampler = ImageResampler(sourceWidth: header.width, sourceHeight: header.height,
///                                pixelFormat: .rgb8, alphaMode: .none,
///                                targetWidth: size.width, targetHeight: size.height)
/// for row in rows { row.withUnsafeBytes { resampler.push(row: $0) } }
/// let thumbnail = resampler.finish()
/// ```
///
/// The algorithm is Pillow's `Image.thumbnail`: an integer box reduction by
/// `⌊source / target / 2⌋` per axis (rows are summed as they arrive), then a bicubic
/// convolution (Keys' cubic, a = −0.5, support 2 scaled by the remaining factor) for the rest,
/// horizontally on each reduced row and vertically over a ring of the few reduced rows an
/// output row needs. Box sums of 8-bit samples are exact integers and every later value is a
/// `Float`, where Pillow rounds to 8 bits between passes.
///
/// - Samples are resampled as stored — sRGB-encoded values, not linear light — as Pillow,
///   libvips' `thumbnail` by default and browsers do.
/// - Straight alpha is resampled premultiplied (colour × alpha, resample, ÷ alpha), so the
///   colour of transparent pixels does not bleed into visible ones; premultiplied input stays
///   premultiplied (colour clamped to alpha after the cubic's overshoot). With
///   `AlphaMode.none` on a format with alpha, the alpha channel is resampled like a colour.
/// - Upscaling is not its job: a target larger than the source in either dimension traps.
///
/// Memory: one source-width row of sums (16- or 32-bit integers for 8-bit samples, `Float`
/// for 16-bit ones), one reduced row, a ring of ``verticalTaps`` output-width rows and the
/// output bitmap. Not thread-safe (and not `Sendable`): one resampler serves one decode.
public final class ImageResampler {
    /// Width of the source image, in pixels.
    public let sourceWidth: Int
    /// Height of the source image; ``push(row:)`` must be called this many times.
    public let sourceHeight: Int
    /// Layout of the pushed rows and of the result.
    public let pixelFormat: PixelFormat
    /// Alpha mode of the pushed rows and of the result.
    public let alphaMode: AlphaMode
    /// Size of the bitmap ``finish()`` returns.
    public let outputSize: ImageSize
    /// Rows pushed so far.
    public private(set) var rowsPushed = 0

    let horizontal: ResamplingAxis
    let vertical: ResamplingAxis
    let channels: Int
    /// `true` for straight alpha: colour is multiplied by alpha before summing.
    let premultipliesAlpha: Bool

    /// Floats per reduced (horizontal-source) row and per output-width row, plus 4 of padding
    /// so kernels may load and store 4 lanes at the last pixel of 3-channel rows.
    private let reducedStride: Int
    private let outputStride: Int
    /// Sums of the current block of `vertical.factor` source rows, `sourceWidth × channels`.
    private let accumulator: UnsafeMutableBufferPointer<Float>
    /// The same as 16-bit integers, used instead for 8-bit samples without premultiplication
    /// when a block's sums fit (`vertical.factor ≤ 257`): half the memory traffic, twice the lanes.
    private let integerAccumulator: UnsafeMutableBufferPointer<UInt16>
    private let usesIntegerSums: Bool
    /// For 8-bit straight alpha: exact sums of colour × alpha and of alpha × 255 (so every
    /// channel is in units of 1/255 of a sample); fits while `vertical.factor ≤ 66051`.
    private let premultipliedAccumulator: UnsafeMutableBufferPointer<UInt32>
    private let usesPremultipliedIntegerSums: Bool
    /// The current block reduced horizontally (unused when `horizontal.factor == 1`).
    private let reduced: UnsafeMutableBufferPointer<Float>
    /// `vertical.taps` rows resampled horizontally, row `r` of the reduced image in slot `r % taps`.
    private let ring: UnsafeMutableBufferPointer<Float>
    /// One output row before it is stored.
    private let column: UnsafeMutableBufferPointer<Float>
    private let horizontalStarts: UnsafeMutableBufferPointer<Int>
    private let horizontalWeights: UnsafeMutableBufferPointer<Float>
    private let verticalStarts: UnsafeMutableBufferPointer<Int>
    private let verticalWeights: UnsafeMutableBufferPointer<Float>
    /// The output pixels, packed.
    private let output: UnsafeMutableRawBufferPointer

    private var rowsInBlock = 0
    private var reducedRows = 0
    private var outputRows = 0

    /// Creates a resampler from `sourceWidth` × `sourceHeight` to `targetWidth` × `targetHeight`.
    ///
    /// Sizes must be positive and the target no larger than the source in either dimension;
    /// anything else traps. Use `ImageSize.fitted(to:contentMode:)` to pick a target.
    ///
    /// - Parameters:
    ///   - sourceWidth: The source's width in pixels.
    ///   - sourceHeight: The source's height in pixels.
    ///   - pixelFormat: The layout of source and output rows.
    ///   - alphaMode: How alpha weighs the colour channels (`AlphaMode`).
    ///   - targetWidth: The output's width in pixels.
    ///   - targetHeight: The output's height in pixels.
    ///   - sourceExtent: How much of the image the source covers, in source pixels, when
    ///   its last column or row covers only part of one: a codec's reduction rounded up (libjpeg
    ///   decodes 3837 rows at 2/8 to 960 rows for 959.25). The output then maps onto that box, as
    ///   Pillow's `thumbnail` resizes from `draft()`'s box; without it, onto the whole source,
    ///   a fraction of a pixel off (up to 4.5 dB on photographs). Clamped to the last pixel.
    public init(
        sourceWidth: Int,
        sourceHeight: Int,
        pixelFormat: PixelFormat,
        alphaMode: AlphaMode,
        targetWidth: Int,
        targetHeight: Int,
        sourceExtent: (width: Double, height: Double)? = nil
    ) {
        precondition(sourceWidth > 0 && sourceHeight > 0, "ImageResampler: empty source \(sourceWidth)×\(sourceHeight)")
        precondition(targetWidth > 0 && targetHeight > 0, "ImageResampler: empty target \(targetWidth)×\(targetHeight)")
        precondition(targetWidth <= sourceWidth && targetHeight <= sourceHeight,
                     "ImageResampler does not upscale: \(sourceWidth)×\(sourceHeight) to \(targetWidth)×\(targetHeight)")
        let (outputBytes, overflow) = targetWidth.multipliedReportingOverflow(by: targetHeight * pixelFormat.bytesPerPixel)
        precondition(!overflow, "ImageResampler: output too large")
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.pixelFormat = pixelFormat
        self.alphaMode = alphaMode
        self.outputSize = ImageSize(width: targetWidth, height: targetHeight)
        horizontal = ResamplingAxis(source: sourceWidth, output: targetWidth, extent: sourceExtent?.width)
        vertical = ResamplingAxis(source: sourceHeight, output: targetHeight, extent: sourceExtent?.height)
        channels = pixelFormat.channelCount
        premultipliesAlpha = pixelFormat.hasAlpha && alphaMode == .straight

        reducedStride = horizontal.reducedSize * channels + 4
        outputStride = targetWidth * channels + 4
        usesIntegerSums = pixelFormat.bitsPerChannel == 8 && !premultipliesAlpha && vertical.factor <= 257
        integerAccumulator = .allocate(zeroed: usesIntegerSums ? sourceWidth * channels + 4 : 0)
        usesPremultipliedIntegerSums = pixelFormat.bitsPerChannel == 8 && premultipliesAlpha && vertical.factor <= 66051
        premultipliedAccumulator = .allocate(zeroed: usesPremultipliedIntegerSums ? sourceWidth * channels : 0)
        let integer = usesIntegerSums || usesPremultipliedIntegerSums
        if integer {
            accumulator = .allocate(zeroed: 0)
        } else {
            accumulator = .allocate(zeroed: sourceWidth * channels + 4)
        }
        reduced = .allocate(zeroed: horizontal.factor > 1 || integer ? reducedStride : 0)
        ring = .allocate(zeroed: vertical.isIdentity ? 0 : vertical.taps * outputStride)
        column = .allocate(zeroed: outputStride)
        horizontalStarts = .copying(horizontal.starts)
        horizontalWeights = .copying(horizontal.weights)
        verticalStarts = .copying(vertical.starts)
        verticalWeights = .copying(vertical.weights)
        output = .allocate(byteCount: outputBytes, alignment: 16)
        // Bound to the sample type the stores write.
        if pixelFormat.bitsPerChannel == 8 {
            output.initializeMemory(as: UInt8.self, repeating: 0)
        } else {
            output.initializeMemory(as: UInt16.self, repeating: 0)
        }
    }

    deinit {
        accumulator.deallocate()
        integerAccumulator.deallocate()
        premultipliedAccumulator.deallocate()
        reduced.deallocate()
        ring.deallocate()
        column.deallocate()
        horizontalStarts.deallocate()
        horizontalWeights.deallocate()
        verticalStarts.deallocate()
        verticalWeights.deallocate()
        output.deallocate()
    }

    /// `true` once all ``sourceHeight`` rows are in.
    public var isComplete: Bool { rowsPushed == sourceHeight }

    /// Box-reduction factors (horizontal, vertical) applied before the bicubic pass.
    public var reductionFactors: (x: Int, y: Int) { (horizontal.factor, vertical.factor) }

    /// Taps of the vertical convolution: how many reduced rows the resampler keeps.
    public var verticalTaps: Int { vertical.taps }

    /// Adds the next source row, top to bottom.
    ///
    /// - Parameter row: At least `sourceWidth × pixelFormat.bytesPerPixel` bytes (more are
    ///   ignored); 16-bit samples in native byte order, any alignment. Pushing more than
    ///   ``sourceHeight`` rows or a short row traps.
    public func push(row: UnsafeRawBufferPointer) {
        precondition(rowsPushed < sourceHeight, "ImageResampler: more rows than the source height \(sourceHeight)")
        precondition(row.count >= sourceWidth * pixelFormat.bytesPerPixel, "ImageResampler: row shorter than \(sourceWidth) pixels")
        guard let base = row.baseAddress else { return }
        accumulate(base)
        rowsPushed += 1
        rowsInBlock += 1
        if rowsInBlock == vertical.factor || rowsPushed == sourceHeight {
            reduceBlock()
        }
    }

    /// Adds the next `count` source rows, `bytesPerRow` apart in `rows`.
    public func push(rows: UnsafeRawBufferPointer, count: Int, bytesPerRow: Int) {
        let rowBytes = sourceWidth * pixelFormat.bytesPerPixel
        precondition(count >= 0 && bytesPerRow >= rowBytes, "ImageResampler: bytesPerRow shorter than a row")
        guard count > 0 else { return }
        precondition(rows.count >= (count - 1) * bytesPerRow + rowBytes, "ImageResampler: too few bytes for \(count) rows")
        for y in 0..<count {
            push(row: UnsafeRawBufferPointer(rebasing: rows[(y * bytesPerRow)..<(y * bytesPerRow + rowBytes)]))
        }
    }

    /// Returns the resized bitmap, packed, in the source's pixel format and alpha mode.
    ///
    /// Calling it before every source row was pushed traps.
    public func finish() -> Bitmap {
        precondition(isComplete, "ImageResampler: \(rowsPushed) of \(sourceHeight) rows pushed")
        precondition(outputRows == outputSize.height, "ImageResampler: internal row count")
        let output = UnsafeRawBufferPointer(self.output)
        return Bitmap(width: outputSize.width, height: outputSize.height, pixelFormat: pixelFormat, alphaMode: alphaMode) { out in
            out.copyMemory(from: output)
        }
    }

    // MARK: - Stages

    /// Adds one source row to the accumulator (the first row of a block overwrites it).
    private func accumulate(_ source: UnsafeRawPointer) {
        let first = rowsInBlock == 0
        let count = sourceWidth * channels
        if usesIntegerSums {
            Self.accumulate(source, into: integerAccumulator.baseAddress.unsafelyUnwrapped, count: count, first: first)
            return
        }
        if usesPremultipliedIntegerSums {
            let sum = premultipliedAccumulator.baseAddress.unsafelyUnwrapped
            if channels == 2 {
                Self.accumulatePremultiplied(source, into: sum, pixels: sourceWidth, channels: 2, first: first)
            } else {
                Self.accumulatePremultiplied(source, into: sum, pixels: sourceWidth, channels: 4, first: first)
            }
            return
        }
        let sum = accumulator.baseAddress.unsafelyUnwrapped
        let max = pixelFormat.bitsPerChannel == 8 ? Float(255) : Float(65535)
        switch (pixelFormat.bitsPerChannel, premultipliesAlpha ? channels : 0) {
        case (8, 0): Self.accumulate(UInt8.self, source, into: sum, count: count, first: first)
        case (16, 0): Self.accumulate(UInt16.self, source, into: sum, count: count, first: first)
        case (8, 2): Self.accumulatePremultiplied(UInt8.self, channels: 2, source, into: sum, pixels: sourceWidth, max: max, first: first)
        case (8, _): Self.accumulatePremultipliedRGBA(UInt8.self, source, into: sum, pixels: sourceWidth, max: max, first: first)
        case (_, 2): Self.accumulatePremultiplied(UInt16.self, channels: 2, source, into: sum, pixels: sourceWidth, max: max, first: first)
        default: Self.accumulatePremultipliedRGBA(UInt16.self, source, into: sum, pixels: sourceWidth, max: max, first: first)
        }
    }

    /// Turns the accumulated block into one reduced row and passes it on.
    private func reduceBlock() {
        let rows = rowsInBlock
        rowsInBlock = 0
        let row: UnsafeMutablePointer<Float>
        if usesIntegerSums {
            row = reduced.baseAddress.unsafelyUnwrapped
            Self.boxReduce(integerAccumulator.baseAddress.unsafelyUnwrapped, into: row, pixels: sourceWidth,
                           factor: horizontal.factor, rows: rows, channels: channels)
        } else if usesPremultipliedIntegerSums {
            row = reduced.baseAddress.unsafelyUnwrapped
            Self.boxReduce(premultipliedAccumulator.baseAddress.unsafelyUnwrapped, into: row, pixels: sourceWidth,
                           factor: horizontal.factor, rows: rows, channels: channels)
        } else if horizontal.factor > 1 {
            row = reduced.baseAddress.unsafelyUnwrapped
            Self.boxReduce(accumulator.baseAddress.unsafelyUnwrapped, into: row, pixels: sourceWidth,
                           factor: horizontal.factor, rows: rows, channels: channels)
        } else {
            row = accumulator.baseAddress.unsafelyUnwrapped
            if rows > 1 { Self.scale(row, count: sourceWidth * channels, by: 1 / Float(rows)) }
        }
        resampleReducedRow(row)
    }

    /// Resamples a reduced row horizontally into the ring and emits every output row whose
    /// vertical window is now complete.
    private func resampleReducedRow(_ row: UnsafeMutablePointer<Float>) {
        let r = reducedRows
        reducedRows += 1
        let width = outputSize.width
        if vertical.isIdentity {
            let target: UnsafeMutablePointer<Float>
            if horizontal.isIdentity {
                target = row
            } else {
                target = column.baseAddress.unsafelyUnwrapped
                horizontalPass(row, into: target)
            }
            store(target, row: outputRows)
            outputRows += 1
            return
        }
        let ringBase = ring.baseAddress.unsafelyUnwrapped
        let taps = vertical.taps
        let slot = ringBase + (r % taps) * outputStride
        if horizontal.isIdentity {
            slot.update(from: row, count: width * channels)
        } else {
            horizontalPass(row, into: slot)
        }
        let starts = verticalStarts.baseAddress.unsafelyUnwrapped
        let weights = verticalWeights.baseAddress.unsafelyUnwrapped
        let target = column.baseAddress.unsafelyUnwrapped
        while outputRows < outputSize.height && starts[outputRows] + taps <= r + 1 {
            let start = starts[outputRows]
            let w = weights + outputRows * taps
            Self.verticalPass(into: target, count: width * channels, taps: taps) { k in
                (ringBase + ((start + k) % taps) * outputStride, w[k])
            }
            store(target, row: outputRows)
            outputRows += 1
        }
    }

    private func horizontalPass(_ row: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<Float>) {
        let starts = horizontalStarts.baseAddress.unsafelyUnwrapped
        let weights = horizontalWeights.baseAddress.unsafelyUnwrapped
        let width = outputSize.width
        let taps = horizontal.taps
        switch channels {
        case 1: Self.convolve(row, into: target, width: width, taps: taps, starts: starts, weights: weights, channels: 1)
        case 2: Self.convolve(row, into: target, width: width, taps: taps, starts: starts, weights: weights, channels: 2)
        case 3: Self.convolveSIMD(row, into: target, width: width, taps: taps, starts: starts, weights: weights, channels: 3)
        default: Self.convolveSIMD(row, into: target, width: width, taps: taps, starts: starts, weights: weights, channels: 4)
        }
    }

    /// Rounds, clamps (and un-premultiplies) one output row into the output bitmap.
    private func store(_ values: UnsafeMutablePointer<Float>, row y: Int) {
        let width = outputSize.width
        let rowBytes = width * pixelFormat.bytesPerPixel
        let destination = output.baseAddress.unsafelyUnwrapped + y * rowBytes
        let alpha: AlphaHandling = !pixelFormat.hasAlpha || alphaMode == .none ? .none
            : (alphaMode == .straight ? .unpremultiply : .clampToAlpha)
        if pixelFormat.bitsPerChannel == 8 {
            Self.store(values, into: destination.assumingMemoryBound(to: UInt8.self), pixels: width, channels: channels, alpha: alpha)
        } else {
            Self.store(values, into: destination.assumingMemoryBound(to: UInt16.self), pixels: width, channels: channels, alpha: alpha)
        }
    }
}

extension UnsafeMutableBufferPointer where Element: Numeric {
    /// A zero-filled buffer of `count` elements.
    fileprivate static func allocate(zeroed count: Int) -> Self {
        let buffer = Self.allocate(capacity: count)
        buffer.initialize(repeating: 0)
        return buffer
    }

    /// A buffer holding a copy of `array`.
    fileprivate static func copying(_ array: [Element]) -> Self {
        let buffer = Self.allocate(capacity: array.count)
        _ = buffer.initialize(from: array)
        return buffer
    }
}
