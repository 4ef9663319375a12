#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// The host's side of a helper conversation, for the `wire` fuzz target (Fuzz/NukeFuzz): every
/// message a helper could send, read by the same code a pool reads it with, and what the host
/// would pass on (images over zeroed memory, with their animations' frame descriptions).
@_spi(Fuzzing) public enum WireFuzzing {
    /// What the host accepted from one conversation.
    public struct Accepted: Sendable {
        public var headers: [ImageHeader] = []
        public var images: [ImageContainer] = []
        /// For each image with an animation, its frames' durations and the loop count, as an
        /// encoder downstream would be given them.
        public var animations: [(loopCount: Int, durations: [Double], canvas: ImageSize)] = []
        public var errors: [ImageCodecError] = []
        public var allocations: [Int] = []
    }

    /// Reads `data` as a helper conversation: 8 bytes of limits and the declared size, then messages (a kind byte, a
    /// 16-bit length, the payload), each read as the host reads that kind. Never traps.
    public static func read(_ data: Data) -> Accepted {
        var accepted = Accepted()
        let bytes = [UInt8](data)
        guard bytes.count >= 8 else { return accepted }
        // Small limits keep each run fast; the bytes choose them.
        let dimension = 1 + Int(bytes[0]) * 4
        let limits = ImageLimits(maxPixelCount: dimension * dimension, maxDimension: dimension, maxFrameCount: 1 + Int(bytes[1] % 64),
                                 maxDecodedBytes: 1 + (Int(bytes[2]) << 12), maxMetadataBytes: Int(bytes[3]) << 4)
        let expected: ImageType? = [ImageType.png, .gif, .webp, .jpeg, .heic, .svg][Int(bytes[4]) % 6]
        // A header the host read, or none (SVG): the bytes choose.
        let declared: Int? = bytes[5] == 0 ? nil : Int(bytes[5]) * Int(bytes[6]) * 4
        var lent = 0
        var delivered = 0
        var offset = 8
        while offset + 3 <= bytes.count {
            let kind = bytes[offset]
            let length = Int(bytes[offset + 1]) | Int(bytes[offset + 2]) << 8
            offset += 3
            let payload = Data(bytes[offset..<min(bytes.count, offset + length)])
            offset += length
            guard let kind = WireMessage.Kind(rawValue: kind), payload.count <= WireBounds(limits).maximumPayload(kind) || kind == .allocate else { continue }
            do throws(WireReader.Malformed) {
                switch kind {
                case .header:
                    accepted.headers.append(try ImageHeader(decoding: payload, limits: limits, expected: expected))
                case .preview, .final:
                    var reader = WireReader(payload)
                    guard let description = try reader.bytes() else { continue }
                    let image = try WireImage(decoding: description, limits: limits, expected: expected)
                    _ = try reader.int()
                    let storage = PixelStorage.allocate(byteCount: image.byteCount, zeroed: true)
                    delivered += image.byteCount
                    accepted.images.append(image.container(storage: storage))
                    if let animation = image.animation {
                        accepted.animations.append((animation.loopCount, animation.frameInfos.map(\.duration), animation.canvasSize))
                    }
                case .failure:
                    var text = ""
                    accepted.errors.append(try ImageCodecError(decoding: payload, expected: expected, codec: "fuzz", helperText: &text))
                    _ = WireRules.escaped(text)
                case .allocate:
                    var reader = WireReader(payload)
                    let count = try reader.int()
                    let (total, overflow) = lent.addingReportingOverflow(max(count, 1))
                    let budget = IsolatedIncrementalDecoder.pixelBudget(limits: limits, declaredBytes: declared, deliveredBytes: delivered)
                    guard count >= 0, !overflow, total <= budget else { continue }
                    lent = total
                    accepted.allocations.append(count)
                case .ready:
                    var reader = WireReader(payload)
                    _ = try reader.bool()
                    _ = try reader.string()
                    if let status = try reader.bytes() { _ = try SandboxStatus(decoding: status) }
                default:
                    continue
                }
            } catch {
                continue
            }
        }
        return accepted
    }
}
