import ArgumentParser
import NukeCore

/// A `WxH` (or `N` for a square) size argument.
struct SizeArgument: Sendable, CustomStringConvertible {
    var size: ImageSize

    init?(_ text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2, let width = Int(parts[0]), width > 0 else { return nil }
        let height = parts.count == 2 ? Int(parts[1]) : width
        guard let height, height > 0 else { return nil }
        size = ImageSize(width: width, height: height)
    }

    var description: String { "\(size.width)x\(size.height)" }
}

extension SizeArgument: ExpressibleByArgument {
    init?(argument: String) { self.init(argument) }
}
