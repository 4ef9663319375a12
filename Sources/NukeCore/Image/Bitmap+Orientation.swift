extension Bitmap {
    /// Returns the bitmap rotated and flipped so that it displays upright: the stored pixels of an
    /// image whose EXIF orientation is `orientation`, as a viewer shows them.
    ///
    /// One pass over the pixels (a copy, or a transpose for orientations 5–8). The decode's output
    /// stage calls it on the decoded, already reduced image
    /// (``ImageDecodingContext/appliesOrientation``), so a thumbnail pays for its own pixels.
    public func oriented(_ orientation: ImageOrientation) -> Bitmap {
        if orientation == .up || width == 0 || height == 0 { return self }
        return oriented(orientation, cropping: nil)
    }

    /// Returns the part `rect` of the bitmap as displayed with `orientation` (`rect` is in the
    /// displayed image's coordinates): ``oriented(_:)`` and a crop in one pass over the pixels
    /// the crop keeps.
    ///
    /// A rectangle that is empty or not inside the displayed image traps.
    public func oriented(_ orientation: ImageOrientation, cropping rect: ImageRect?) -> Bitmap {
        let displayed = orientation.swapsDimensions ? (width: height, height: width) : (width: width, height: height)
        let rect = rect ?? ImageRect(x: 0, y: 0, width: displayed.width, height: displayed.height)
        precondition(rect.isInside(ImageSize(width: displayed.width, height: displayed.height)),
                     "crop \(rect) is not inside the \(displayed.width)×\(displayed.height) displayed image")
        if orientation == .up, rect.x == 0, rect.y == 0, rect.width == width, rect.height == height { return self }
        let bpp = pixelFormat.bytesPerPixel
        let (outWidth, outHeight) = (rect.width, rect.height)
        // The stored pixel shown at the output's origin, and the steps (in bytes) that moving one
        // output pixel right and one output row down take in the stored image.
        let (steps, corner) = (orientation.steps, orientation.origin(width: width, height: height))
        let stepX = steps.x.0 * bpp + steps.x.1 * bytesPerRow
        let stepY = steps.y.0 * bpp + steps.y.1 * bytesPerRow
        let start = corner.0 * bpp + corner.1 * bytesPerRow + rect.x * stepX + rect.y * stepY
        let outRow = outWidth * bpp
        let bytes = [UInt8](unsafeUninitializedCapacity: outRow * outHeight) { out, count in
            withUnsafeBytes { input in
                guard let source = input.baseAddress, let target = UnsafeMutableRawPointer(out.baseAddress) else { return }
                for oy in 0..<outHeight {
                    var s = source + (start + oy * stepY)
                    var d = target + oy * outRow
                    if stepX == bpp {
                        // Rows stay rows, left to right (a crop, or a flip top to bottom).
                        d.copyMemory(from: s, byteCount: outRow)
                        continue
                    }
                    switch bpp {
                    case 4:
                        for _ in 0..<outWidth {
                            d.storeBytes(of: s.loadUnaligned(as: UInt32.self), as: UInt32.self)
                            s += stepX; d += 4
                        }
                    case 1:
                        for _ in 0..<outWidth {
                            d.storeBytes(of: s.load(as: UInt8.self), as: UInt8.self)
                            s += stepX; d += 1
                        }
                    default:
                        for _ in 0..<outWidth {
                            d.copyMemory(from: s, byteCount: bpp)
                            s += stepX; d += bpp
                        }
                    }
                }
            }
            count = outRow * outHeight
        }
        return Bitmap(width: outWidth, height: outHeight, pixelFormat: pixelFormat, alphaMode: alphaMode, bytes: bytes)
    }
}
