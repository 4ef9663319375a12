import NukeCore

extension Bitmap {
    /// Returns the bitmap composited onto an opaque `background`, without alpha: `PixelFormat.gray8`
    /// for gray pixels (onto the background's Rec. 601 luma), `PixelFormat.rgb8` for colour.
    ///
    /// `out = (c·a + b·(255 − a)) / 255` on straight 8-bit samples, as Pillow's `paste` with a
    /// mask and vips' `flatten` compute. A bitmap without alpha is only converted.
    public func flattened(onto background: RGBColor) -> Bitmap {
        let output: PixelFormat = pixelFormat.isGray ? .gray8 : .rgb8
        guard pixelFormat.hasAlpha else { return converted(to: output) }
        let straight = converted(to: .rgba8)
        let gray = (Int(background.red) * 299 + Int(background.green) * 587 + Int(background.blue) * 114 + 500) / 1000
        let under = pixelFormat.isGray ? [gray, gray, gray] : [Int(background.red), Int(background.green), Int(background.blue)]
        let channels = output.channelCount
        return Bitmap(width: width, height: height, pixelFormat: output, alphaMode: AlphaMode.none) { out in
            straight.withUnsafeBytes { input in
                for index in 0..<(width * height) {
                    let p = index * 4
                    let a = Int(input[p + 3])
                    for c in 0..<channels {
                        out[index * channels + c] = UInt8((Int(input[p + c]) * a + under[c] * (255 - a) + 127) / 255)
                    }
                }
            }
        }
    }
}
