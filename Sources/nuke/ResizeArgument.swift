import ArgumentParser
import NukeCore

/// `--resize`: `fit:WxH` (inside the box), `fill:WxH` (cover the box), or `WxH` for `fit`.
struct ResizeArgument: Sendable, CustomStringConvertible {
    var size: ImageSize
    var contentMode: ImageDecodingContext.ContentMode

    init?(_ text: String) {
        let parts = text.lowercased().split(separator: ":", maxSplits: 1).map(String.init)
        let mode = parts.count == 2 ? parts[0] : "fit"
        guard let size = SizeArgument(parts.last ?? "")?.size else { return nil }
        switch mode {
        case "fit": contentMode = .aspectFit
        case "fill": contentMode = .aspectFill
        default: return nil
        }
        self.size = size
    }

    var description: String { "\(contentMode == .aspectFill ? "fill" : "fit"):\(size.width)x\(size.height)" }
}

extension ResizeArgument: ExpressibleByArgument {
    init?(argument: String) { self.init(argument) }
}
