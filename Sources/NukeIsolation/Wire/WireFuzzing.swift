#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
internal import CNukeIsolation
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

    /// Sends a message's bytes, framed as a helper frames them, on a socket with some descriptors
    /// attached (SCM_RIGHTS); returns 0 or -errno. The fuzz target's C support provides it.
    public typealias Send = (_ socket: Int32, _ bytes: Data, _ descriptors: Int) -> Int32

    /// Reads `data` as a helper conversation: 8 bytes of limits and the declared size, then
    /// messages (a byte of kind, whose top three bits are the descriptors sent with it, a 16-bit
    /// length, the payload), each read as the host reads that kind. With `send`, every message
    /// goes over a real socket pair, framed as a helper frames it (a 32-bit length, cut short when
    /// the conversation is), with its descriptors, and the host's own reader
    /// (`HelperProcess.receive`) takes it off: the conversation ends where the host would kill the
    /// helper. Never traps, and leaks no descriptor (a leak ends the run when the descriptor table
    /// is full).
    public static func read(_ data: Data, send: Send? = nil) -> Accepted {
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
        let channel = send.map { Channel(send: $0) }
        var offset = 8
        while offset + 3 <= bytes.count {
            let (kindByte, descriptors) = (bytes[offset] & 0x1F, Int(bytes[offset] >> 5))
            let length = Int(bytes[offset + 1]) | Int(bytes[offset + 2]) << 8
            offset += 3
            var payload = Data(bytes[offset..<min(bytes.count, offset + length)])
            offset += length
            if let channel {
                // The host's reader decides; what it refuses ends the conversation.
                guard let message = channel.carry(kindByte, declaredLength: length, payload, descriptors: descriptors, limits: limits) else { break }
                payload = message.payload
            }
            guard let kind = WireMessage.Kind(rawValue: kindByte), payload.count <= WireBounds(limits).maximumPayload(kind) else { continue }
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

    /// A socket pair between a fuzzed helper and the host's reader.
    private final class Channel {
        private let helper: Int32
        private let host: Int32
        private let send: Send

        init(send: @escaping Send) {
            var ends: [Int32] = [-1, -1]
            // Every iteration closes both ends: running out of descriptors means a leak.
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                preconditionFailure("no socket pair (\(String(cString: strerror(errno)))): descriptors leak")
            }
            (helper, host, self.send) = (ends[0], ends[1], send)
        }

        deinit {
            close(helper)
            close(host)
        }

        /// The message the host's reader takes off the socket after the helper sent `kind`,
        /// `declaredLength` and `payload` (shorter when the conversation is cut), or `nil` when it
        /// refuses it (unknown kind, too long, cut short).
        func carry(_ kind: UInt8, declaredLength: Int, _ payload: Data, descriptors: Int, limits: ImageLimits) -> WireMessage? {
            var frame = Data([kind])
            withUnsafeBytes(of: UInt32(declaredLength).littleEndian) { frame.append(contentsOf: $0) }
            frame.append(payload)
            guard send(helper, frame, descriptors) == 0 else { return nil }
            // A message cut short is the helper's last: it hangs up, and the host reads the end.
            if payload.count < declaredLength { shutdown(helper, Int32(SHUT_WR)) }
            let bounds = WireBounds(limits)
            // Everything sent is in the socket already, so the deadline is never reached.
            return try? HelperProcess.receive(socket: host, deadline: nukeiso_now_ms() + 1000, bound: { bounds.maximumPayload($0) })
        }
    }
}
