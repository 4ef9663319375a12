/// Every field the host reads from a helper, with the rule it must meet before the host uses it.
///
/// The threat model assumes an attacker runs code in a helper from its first untrusted byte, so
/// nothing a helper sends is believed: each value is checked against its rule here (or, for
/// sizes, against the decode's limits in ``WireBounds``) and a value outside it makes the helper a
/// sandbox violation: it is killed and the decode fails with `.sandboxViolation`. Nothing a helper
/// sends can trap the host, and nothing downstream (encoders, the CLI, a service) sees a value
/// outside these rules. `WireRulesTests` has a test per row.
enum WireField: String, CaseIterable, Sendable {
    // Framing (``HelperProcess/receive(deadline:limit:)``).
    case messageKind, messageLength
    // Pixel memory (``SharedPixelBuffers``).
    case allocationSize, bufferID
    // A header.
    case headerType, headerSize, headerBitDepth, headerComponentCount, headerAlpha, headerFrameCount, headerOrientation
    // An image: its pixels' layout.
    case imageSize, pixelChannels, pixelBits, alphaMode, bytesPerRow, byteCount
    // An image: what travels with the pixels.
    case imageType, orientation, metadataBlock, gamma, sRGBIntent, loopCount, duration
    case userInfoCount, userInfoKey, userInfoValue
    // An animation's description.
    case canvasSize, backgroundColor, frameCount, frameRectangle, frameDuration, frameDisposal
    // A decoder's failure.
    case errorCode, errorStage, errorFormat, errorText
    // The sandbox status a helper reports when ready (for `nuke formats`, never a client).
    case unreadablePath, threadCap

    /// The rule, as the documentation and the test name it.
    var rule: String {
        switch self {
        case .messageKind: "one of the kinds a helper sends (ready, needsMoreData, header, preview, final, failure, allocate), each only where the conversation expects it"
        case .messageLength: "at most the longest message of its kind for the decode's limits, read only up to that"
        case .allocationSize: "≥ 0, and all of a decode's requests together within 1.2 × its maxDecodedBytes and, when the host reads the header, four declared images and 1 MiB beyond the images handed back"
        case .bufferID: "a buffer lent to this helper, large enough for the image that names it"
        case .headerType, .imageType, .errorFormat: "a format the host knows (built in, registered, or with a codec in its registry), at most \(WireRules.maximumTypeLength) bytes"
        case .headerSize, .imageSize, .canvasSize: "width and height ≥ 0, within maxDimension, their product within maxPixelCount"
        case .headerBitDepth: "absent, or 1 to 32 bits per sample"
        case .headerComponentCount: "absent, or 1 to 8 components"
        case .headerAlpha: "absent, no or yes (-1, 0, 1)"
        case .headerFrameCount: "absent, or 0 to maxFrameCount"
        case .headerOrientation, .orientation: "absent (headers only), or an EXIF orientation 1 to 8"
        case .pixelChannels: "one of the pixel formats' channel counts"
        case .pixelBits: "8 or 16 bits per channel"
        case .alphaMode: "one of the alpha modes"
        case .bytesPerRow: "at least a row, at most two rows plus 64 bytes"
        case .byteCount: "bytesPerRow × height exactly, within maxDecodedBytes"
        case .metadataBlock: "ICC, EXIF and XMP each within maxMetadataBytes"
        case .gamma: "absent, or finite in (0, \(Int(WireRules.maximumGamma))]"
        case .sRGBIntent: "absent, or a rendering intent 0 to 3"
        case .loopCount: "0 (forever) to \(WireRules.maximumLoopCount) plays"
        case .duration, .frameDuration: "absent (images only), or finite from 0 to \(Int(WireRules.maximumDuration)) s, APNG's longest delay"
        case .userInfoCount: "at most \(WireRules.maximumUserInfoEntries) entries"
        case .userInfoKey: "at most \(WireRules.maximumKeyLength) bytes of a-z, 0-9, '.', '-', '/'"
        case .userInfoValue: "an integer, a finite number, a flag, a size within the limits, a list of at most 1,000, or a string of at most \(WireRules.maximumValueLength) printable ASCII bytes"
        case .backgroundColor: "absent, or at most 8 bytes"
        case .frameCount: "1 to maxFrameCount, each frame described"
        case .frameRectangle: "origin 0 to 2³² − 1, size within the limits"
        case .frameDisposal: "none, background or previous"
        case .errorCode: "one of ImageCodecError's codes a decoder reports (anything else reads as 'decoder failed')"
        case .errorStage: "one of ImageCodecError's stages (anything else reads as 'decoding')"
        case .threadCap: "0 (none) to \(WireRules.maximumThreadCap) threads"
        case .unreadablePath: "at most \(WireRules.maximumUnreadablePaths), each an absolute path of at most \(WireRules.maximumPathLength) printable ASCII bytes"
        case .errorText: "never shown to the caller: the host writes its own message; the helper's text goes to the log, at most \(WireRules.maximumLoggedText) bytes, escaped"
        }
    }
}
