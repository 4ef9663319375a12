#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// The ICO and CUR header hook: the largest entry's size (from its own header when its bytes
/// have arrived), which is what a decode without a target size decodes.
enum ICOHeaderParser {
    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        data.prefix(1 << 16).withUnsafeBytes { ICODirectory.read($0) }.parseResult { directory in
            let entry = directory.best(for: nil)
            guard entry.width > 0, entry.height > 0 else { return nil }
            return ImageHeader(type: directory.type, width: entry.width, height: entry.height, bitDepth: 8,
                               componentCount: 4, hasAlpha: true, frameCount: 1)
        }
    }
}
