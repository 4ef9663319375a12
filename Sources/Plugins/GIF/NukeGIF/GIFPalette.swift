internal import CGIFShim
import NukeCore
import NukePluginKit
import NukePixels

/// A frame reduced to a GIF colour table and one index per pixel.
struct GIFPalette {
    /// One byte per pixel, row after row.
    var indices: [UInt8]
    /// RGB triplets, 1…256 of them.
    var palette: [UInt8]
    /// The index of the transparent entry, when some pixels have alpha below 128.
    var transparentIndex: Int?

    /// Indexes `bitmap`: exact when its opaque colours fit the table, otherwise through
    /// giflib's median-cut quantiser (`GifQuantizeBuffer`).
    static func indexed(_ bitmap: Bitmap) throws(ImageCodecError) -> GIFPalette {
        let rgba = bitmap.unpremultiplied().converted(to: .rgba8).packedBytes
        let count = bitmap.width * bitmap.height
        var colors: [UInt32: UInt8] = [:]
        var palette: [UInt8] = []
        var indices = [UInt8](repeating: 0, count: count)
        var exact = true
        let hasTransparency = stride(from: 3, to: count * 4, by: 4).contains { rgba[$0] < 128 }
        let capacity = hasTransparency ? 255 : 256
        for i in 0..<count {
            if rgba[i * 4 + 3] < 128 { continue }
            let key = UInt32(rgba[i * 4]) << 16 | UInt32(rgba[i * 4 + 1]) << 8 | UInt32(rgba[i * 4 + 2])
            if let index = colors[key] {
                indices[i] = index
            } else if colors.count < capacity {
                let index = UInt8(colors.count)
                colors[key] = index
                palette += [rgba[i * 4], rgba[i * 4 + 1], rgba[i * 4 + 2]]
                indices[i] = index
            } else {
                exact = false
                break
            }
        }
        if !exact {
            var red = [UInt8](repeating: 0, count: count), green = red, blue = red
            for i in 0..<count {
                red[i] = rgba[i * 4]; green[i] = rgba[i * 4 + 1]; blue[i] = rgba[i * 4 + 2]
            }
            var used = Int32(capacity)
            var table = [UInt8](repeating: 0, count: 256 * 3)
            var diagnostics = nuke_diagnostics()
            let status = nukegif_quantize(UInt32(bitmap.width), UInt32(bitmap.height), red, green, blue, &indices, &table, &used, &diagnostics)
            guard status == NUKE_STATUS_OK else {
                throw GIFLibrary.encodingError(diagnostics.messageText)
            }
            palette = Array(table.prefix(Int(used) * 3))
        }
        if palette.isEmpty { palette = [0, 0, 0] }
        var transparentIndex: Int?
        if hasTransparency {
            let index = palette.count / 3
            palette += [0, 0, 0]
            transparentIndex = index
            for i in 0..<count where rgba[i * 4 + 3] < 128 { indices[i] = UInt8(index) }
        }
        return GIFPalette(indices: indices, palette: palette, transparentIndex: transparentIndex)
    }
}
