import NukeCore

extension Bitmap {
    /// Returns the bitmap shrunk to `size` by ``ImageResampler`` (Pillow's `thumbnail`
    /// algorithm: box reduction, then bicubic), in the same pixel format and alpha mode, packed.
    ///
    /// Returns `self` when the size is unchanged. A size larger than the bitmap in either
    /// dimension, or an empty one, traps: pick it with
    /// `ImageSize.fitted(to:contentMode:)`.
    ///
    /// - Parameters:
    ///   - size: The new size, no larger than the bitmap's in either dimension.
    ///   - sourceExtent: How much of the image the bitmap covers when its last column or
    ///   row covers only part of a pixel (``ImageResampler/init(sourceWidth:sourceHeight:pixelFormat:alphaMode:targetWidth:targetHeight:sourceExtent:)``).
    public func resized(to size: ImageSize, sourceExtent: (width: Double, height: Double)? = nil) -> Bitmap {
        if size.width == width && size.height == height { return self }
        let resampler = ImageResampler(
            sourceWidth: width, sourceHeight: height, pixelFormat: pixelFormat, alphaMode: alphaMode,
            targetWidth: size.width, targetHeight: size.height, sourceExtent: sourceExtent
        )
        withUnsafeBytes { bytes in
            resampler.push(rows: bytes, count: height, bytesPerRow: bytesPerRow)
        }
        return resampler.finish()
    }

    /// Returns the bitmap shrunk to fit or fill `target` (see
    /// `ImageSize.fitted(to:contentMode:)`); never enlarged.
    public func resized(toFit target: ImageSize, contentMode: ImageDecodingContext.ContentMode = .aspectFit) -> Bitmap {
        guard width > 0, height > 0 else { return self }
        let size = ImageSize(width: width, height: height).fitted(to: target, contentMode: contentMode)
        return resized(to: size)
    }
}
