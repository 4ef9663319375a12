import Foundation
import NukeCore
@testable import NukePNG

/// Decoding helpers shared by the tests.
enum PNGTestDecoding {
    /// A one-shot decode on a fresh decoder.
    static func decode(_ data: Data, highBitDepth: Bool = false, limits: ImageLimits = .default) throws -> ImageContainer {
        try ImageDecoders.PNG(prefersHighBitDepth: highBitDepth, limits: limits).decode(data)
    }

    /// Feeds `data` to one decoder in pieces ending at `ends`, then decodes all of it.
    static func progressive(
        _ data: Data, ends: [Int], highBitDepth: Bool = false
    ) throws -> (previews: [ImageContainer], final: ImageContainer) {
        let decoder = ImageDecoders.PNG(prefersHighBitDepth: highBitDepth)
        var previews: [ImageContainer] = []
        for end in ends where end < data.count {
            if let preview = decoder.decodePartiallyDownloadedData(data.prefix(end)) {
                previews.append(preview)
            }
        }
        return (previews, try decoder.decode(data))
    }

    /// The code of the ``ImageCodecError`` `body` throws, or `nil` when it succeeds.
    static func errorCode(_ body: () throws -> Void) -> ImageCodecError.Code? {
        do {
            try body()
            return nil
        } catch let error as ImageCodecError {
            return error.code
        } catch {
            return ImageCodecError.Code(rawValue: "foreign: \(error)")
        }
    }
}
