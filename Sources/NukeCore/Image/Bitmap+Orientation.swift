extension Bitmap {
    /// Returns the bitmap rotated and flipped so that it displays upright: the stored pixels of an
    /// image whose EXIF orientation is `orientation`, as a viewer shows them.
    ///
    /// One pass over the pixels (a copy, or a transpose for orientations 5–8). The decode's output
    /// stage calls it on the decoded, already reduced image
    /// (``ImageDecodingContext/appliesOrientation``), so a thumbnail pays for its own pixels.
    public func oriented(_ orientation: ImageOrientation) -> Bitmap {
        if orientation == .up || width == 0 || height == 0 { return self }
        let bpp = pixelFormat.bytesPerPixel
        let outWidth = orientation.swapsDimensions ? height : width
        let outHeight = orientation.swapsDimensions ? width : height
        // The stored pixel shown at the output's origin, and the steps (in bytes) that moving one
        // output pixel right and one output row down take in the stored image.
        let right = bpp, down = bytesPerRow
        let lastX = (width - 1) * bpp, lastY = (height - 1) * bytesPerRow
        let (start, stepX, stepY): (Int, Int, Int) = switch orientation {
        case .up: (0, right, down)
        case .upMirrored: (lastX, -right, down)
        case .down: (lastX + lastY, -right, -down)
        case .downMirrored: (lastY, right, -down)
        case .leftMirrored: (0, down, right)
        case .right: (lastY, -down, right)
        case .rightMirrored: (lastX + lastY, -down, -right)
        case .left: (lastX, down, -right)
        }
        let outRow = outWidth * bpp
        let bytes = [UInt8](unsafeUninitializedCapacity: outRow * outHeight) { out, count in
            withUnsafeBytes { input in
                guard let source = input.baseAddress, let target = UnsafeMutableRawPointer(out.baseAddress) else { return }
                for oy in 0..<outHeight {
                    var s = source + (start + oy * stepY)
                    var d = target + oy * outRow
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
