import Foundation
import NukeCore

// Nuke's shortcuts, so that `processors: [.resize(width: 320), .circle()]` reads as it does there.
// Sizes are pixels by default: a server has no screen whose scale points could mean.

extension ImageProcessing where Self == ImageProcessors.Resize {
    /// Scales the image to `size` pixels (``ImageProcessors/Resize/init(size:contentMode:crop:upscale:)``).
    public static func resize(size: ImageSize, contentMode: ImageProcessingOptions.ContentMode = .aspectFill,
                              crop: Bool = false, upscale: Bool = false) -> ImageProcessors.Resize {
        ImageProcessors.Resize(size: size, contentMode: contentMode, crop: crop, upscale: upscale)
    }

    /// Scales the image to `size` in `unit`s (pixels unless told), as Nuke's `resize(size:unit:...)`.
    public static func resize(size: CGSize, unit: ImageProcessingOptions.Unit = .pixels,
                              contentMode: ImageProcessingOptions.ContentMode = .aspectFill,
                              crop: Bool = false, upscale: Bool = false) -> ImageProcessors.Resize {
        ImageProcessors.Resize(width: Double(size.width), height: Double(size.height), unit: unit,
                               contentMode: contentMode, crop: crop, upscale: upscale)
    }

    /// Scales the image to `width` pixels wide, its height following.
    public static func resize(width: Int, upscale: Bool = false) -> ImageProcessors.Resize {
        ImageProcessors.Resize(width: width, upscale: upscale)
    }

    /// Scales the image to `height` pixels high, its width following.
    public static func resize(height: Int, upscale: Bool = false) -> ImageProcessors.Resize {
        ImageProcessors.Resize(height: height, upscale: upscale)
    }
}

extension ImageProcessing where Self == ImageProcessors.Circle {
    /// Crops the image to a circle, with an optional border.
    public static func circle(border: ImageProcessingOptions.Border? = nil) -> ImageProcessors.Circle {
        ImageProcessors.Circle(border: border)
    }
}

extension ImageProcessing where Self == ImageProcessors.RoundedCorners {
    /// Rounds the corners to `radius` in `unit`s (pixels unless told).
    public static func roundedCorners(radius: Double, unit: ImageProcessingOptions.Unit = .pixels,
                                      border: ImageProcessingOptions.Border? = nil) -> ImageProcessors.RoundedCorners {
        ImageProcessors.RoundedCorners(radius: radius, unit: unit, border: border)
    }
}

extension ImageProcessing where Self == ImageProcessors.GaussianBlur {
    /// Blurs the image with a Gaussian of `radius` pixels (Nuke's default 8).
    public static func gaussianBlur(radius: Double = 8) -> ImageProcessors.GaussianBlur {
        ImageProcessors.GaussianBlur(radius: radius)
    }
}
