#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// The ICO and CUR header hook: the largest entry's size (from its own header when its bytes
/// have arrived), which is what a decode without a target size decodes.
enum ICOHeaderParser {
    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        let outcome = data.prefix(1 << 16).withUnsafeBytes { ICODirectory.read($0) }
        switch outcome {
        case .directory(let directory):
            let entry = directory.best(for: nil)
            guard entry.width > 0, entry.height > 0 else { return .unavailable }
            return .parsed(ImageHeader(type: directory.type, width: entry.width, height: entry.height, bitDepth: 8,
                                       componentCount: 4, hasAlpha: true, frameCount: 1))
        case .needsMoreData: return .needsMoreData
        case .invalid: return .unavailable
        }
    }
}
