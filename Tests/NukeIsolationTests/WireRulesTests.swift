import Foundation
import NukeCore
@_spi(Fuzzing) @testable import NukeIsolation
import Testing

// Nested in IsolationSuites: the allocation rows map lent pixel memory, which
// IsolatedDecodingTests.nothingIsLeftBehind counts.
extension IsolationSuites {
    /// A test per row of ``WireField``: the host refuses (or, for a failure's code and stage, reads
    /// as a plain failure) every value outside a field's rule, without trapping, and keeps what it
    /// may use. The payloads are written here by hand, as a compromised helper would write them.
    @Suite struct WireRulesTests {
        static let limits = ImageLimits(maxPixelCount: 10_000, maxDimension: 1_000, maxFrameCount: 50, maxDecodedBytes: 1 << 20, maxMetadataBytes: 4_096)

        /// The helper gets the codecs' own limits as the host has them — their preset and the
        /// values set — though the host links none of those codecs (this target links no NukeSVG).
        @Test func aRequestCarriesTheCodecsLimits() throws {
            let key = ImageLimits.Key(name: "svg-elements", defaultValue: 1_000_000, untrustedValue: 100_000)
            let other = ImageLimits.Key(name: "made-up", defaultValue: 1, untrustedValue: 2)
            var context = ImageDecodingContext(data: Data())
            context.limits = .untrusted
            context.limits[other] = 9
            let request = IsolatedDecodeRequest(context: context, limits: IsolationLimits(), wantsPreviews: false, servesFrames: false)
            let decoded = try IsolatedDecodeRequest(decoding: request.encoded())
            #expect(decoded.limits == context.limits)
            #expect(decoded.limits[key] == 100_000 && decoded.limits[other] == 9)
        }

        /// An image description, every field as a helper could write it; `with` replaces fields by name.
        struct ImagePayload {
            var width = 3, height = 2, channels = 4, bits = 8
            var alpha: String? = "straight"
            var bytesPerRow = 12, byteCount = 24
            var type: String? = "public.png"
            var orientation = 1
            var icc: Data? = nil
            var gamma = -1.0
            var intent = -1
            var loopCount = 0
            var duration = -1.0
            var exif: Data? = nil
            var userInfo: [(key: String?, tag: Int, value: Data)] = []
            var userInfoCount: Int?
            var animation: Data? = nil

            var data: Data {
                var w = WireWriter()
                w.int(width); w.int(height); w.int(channels); w.int(bits)
                w.string(alpha)
                w.int(bytesPerRow); w.int(byteCount)
                w.string(type)
                w.bool(false)
                w.int(orientation)
                w.bytes(icc)
                w.double(gamma)
                w.int(intent)
                w.int(loopCount)
                w.double(duration)
                w.bytes(exif)
                w.bytes(nil)
                w.int(userInfoCount ?? userInfo.count)
                for entry in userInfo {
                    w.string(entry.key)
                    w.int(entry.tag)
                    w.bytes(entry.value)
                }
                w.bytes(animation)
                return w.data
            }

            func decoded() throws(WireReader.Malformed) -> WireImage {
                try WireImage(decoding: data, limits: IsolationSuites.WireRulesTests.limits, expected: .png)
            }
        }

        /// An animation description: `frames` frames (each described), with overrides.
        static func animation(count: Int? = nil, frames: Int = 2, loopCount: Int = 0, background: Data? = nil,
                              rectangle: (Int, Int, Int, Int) = (0, 0, 3, 2), duration: Double = 0.1, disposal: Int = 0,
                              canvas: (Int, Int) = (3, 2)) -> Data {
            var w = WireWriter()
            w.int(canvas.0); w.int(canvas.1)
            w.int(loopCount)
            w.bytes(background)
            w.int(count ?? frames)
            for _ in 0..<frames {
                for value in [rectangle.0, rectangle.1, rectangle.2, rectangle.3] { w.int(value) }
                w.double(duration)
                w.int(disposal)
                w.bool(false)
            }
            return w.data
        }

        static func header(type: String = "public.png", width: Int = 3, height: Int = 2, bitDepth: Int = 8, components: Int = 3,
                           alpha: Int = 0, frames: Int = 1, orientation: Int = 1) -> Data {
            var w = WireWriter()
            w.string(type)
            w.int(width); w.int(height)
            w.int(bitDepth); w.int(components); w.int(alpha)
            w.bool(false)
            w.int(frames)
            w.bool(false)
            w.int(orientation)
            return w.data
        }

        static func failure(code: String = "corrupt", stage: String = "decoding", format: String? = "public.png",
                            codec: String = "libpng", text: String = "bad CRC") -> Data {
            var w = WireWriter()
            w.string(code); w.string(stage); w.string(format); w.string(codec); w.string(text)
            return w.data
        }

        static func int(_ value: Int) -> Data {
            var w = WireWriter()
            w.int(value)
            return w.data
        }

        static func double(_ value: Double) -> Data {
            var w = WireWriter()
            w.double(value)
            return w.data
        }

        func refused(_ body: () throws(WireReader.Malformed) -> Void, _ comment: Comment) {
            #expect(throws: WireReader.Malformed.self, comment) { try body() }
        }

        @Test func anHonestImageIsRead() throws {
            var honest = ImagePayload()
            honest.gamma = 0.45455
            honest.intent = 0
            honest.duration = 0.1
            honest.userInfo = [("nukecodecs/is-progressive", 3, Data([1]))]
            honest.animation = Self.animation()
            let image = try honest.decoded()
            #expect(image.width == 3 && image.colorInfo.gamma == 0.45455 && image.duration == 0.1)
            #expect(image.animation?.frameInfos.count == 2)
            #expect(try ImageHeader(decoding: Self.header(), limits: Self.limits, expected: .png).width == 3)
        }

        /// The wire fuzz target's seeds (scripts/make-wire-seeds.py) are conversations the host
        /// reads as intended: the honest ones accepted, the hostile values refused.
        @Test func theFuzzSeedsSpeakTheWire() throws {
            func read(_ name: String) throws -> WireFuzzing.Accepted {
                WireFuzzing.read(try IsolationTestPaths.fixture("wire/\(name).wire"))
            }
            let still = try read("honest-still")
            #expect(still.headers.count == 1 && still.images.count == 1 && still.allocations == [24])
            #expect(still.images.first?.image.width == 3)
            let animated = try read("honest-animation")
            #expect(animated.animations.first?.durations == [0.1, 0.1, 0.1])
            #expect(try read("honest-failure").errors.first?.code == .corrupt)
            #expect(try read("previews").images.count == 2)
            #expect(try read("hostile-duration").images.isEmpty)
            #expect(try read("hostile-allocations").allocations == [60_000])
        }

        @Test(arguments: WireField.allCases)
        func everyFieldHasItsRule(_ field: WireField) throws {
            let limits = Self.limits
            func refusedImage(_ change: (inout ImagePayload) -> Void) {
                var payload = ImagePayload()
                change(&payload)
                refused({ () throws(WireReader.Malformed) in _ = try payload.decoded() }, "\(field): \(field.rule)")
            }
            func refusedHeader(_ data: Data) {
                refused({ () throws(WireReader.Malformed) in _ = try ImageHeader(decoding: data, limits: limits, expected: .png) }, "\(field)")
            }
            func refusedAnimation(_ data: Data) {
                refusedImage { $0.animation = data }
            }
            switch field {
            case .messageKind:
                // Only the helper's kinds are read (the zygote's and host's are not): an unknown byte
                // is no kind at all, and a host's kind from a helper is a violation (HostileHelperTests).
                #expect(WireMessage.Kind(rawValue: 99) == nil)
                #expect(WireMessage.Kind(rawValue: 0) == nil)
            case .messageLength:
                let bounds = WireBounds(limits)
                #expect(bounds.maximumPayload(.needsMoreData) == 0)
                #expect(bounds.maximumPayload(.failure) == 64 << 10)
                #expect(bounds.maximumPayload(.final) < 1 << 24)
                #expect(bounds.maximumPayload(.fork) == 0)
            case .allocationSize:
                let buffers = SharedPixelBuffers(budget: 0)
                let lease = buffers.makeLease()
                defer { buffers.ended(lease) }
                #expect(throws: SharedPixelBuffers.Refused.self) { _ = try buffers.lend(byteCount: -1, to: lease, limit: 1 << 20) }
                _ = try buffers.lend(byteCount: 600 << 10, to: lease, limit: 1 << 20)
                // Together past the budget: refused, whatever each asks.
                #expect(throws: SharedPixelBuffers.Refused.self) { _ = try buffers.lend(byteCount: 600 << 10, to: lease, limit: 1 << 20) }
                // The budget: the byte limit's 1.2 ×, or less when the host read a header.
                let limits = ImageLimits(maxDecodedBytes: 100 << 20)
                #expect(IsolatedIncrementalDecoder.pixelBudget(limits: limits, declaredBytes: nil, deliveredBytes: 0) == 120 << 20)
                #expect(IsolatedIncrementalDecoder.pixelBudget(limits: limits, declaredBytes: 1024, deliveredBytes: 0) == 4096 + (1 << 20))
                #expect(IsolatedIncrementalDecoder.pixelBudget(limits: limits, declaredBytes: 1024, deliveredBytes: 1024) == 5120 + (1 << 20))
                #expect(IsolatedIncrementalDecoder.pixelBudget(limits: limits, declaredBytes: Int.max, deliveredBytes: Int.max) == 120 << 20)
            case .bufferID:
                let buffers = SharedPixelBuffers(budget: 0)
                let lease = buffers.makeLease()
                defer { buffers.ended(lease) }
                #expect(throws: SharedPixelBuffers.Refused.self) { _ = try buffers.adopt(id: 999_999, byteCount: 24, lease: lease) }
                let lent = try buffers.lend(byteCount: 8, to: lease, limit: 1 << 20)
                #expect(throws: SharedPixelBuffers.Refused.self) { _ = try buffers.adopt(id: lent.id, byteCount: 24, lease: lease) }
            case .headerType:
                refusedHeader(Self.header(type: "made.up"))
                refusedHeader(Self.header(type: String(repeating: "x", count: 200)))
            case .headerSize:
                refusedHeader(Self.header(width: 1 << 40, height: 1 << 40))
                refusedHeader(Self.header(width: -1))
            case .headerBitDepth:
                refusedHeader(Self.header(bitDepth: 1 << 32))
                refusedHeader(Self.header(bitDepth: 0))
            case .headerComponentCount:
                refusedHeader(Self.header(components: 1 << 40))
            case .headerAlpha:
                refusedHeader(Self.header(alpha: 2))
            case .headerFrameCount:
                refusedHeader(Self.header(frames: 51))
                refusedHeader(Self.header(frames: -7))
            case .headerOrientation:
                refusedHeader(Self.header(orientation: 9))
                refusedHeader(Self.header(orientation: 256 + 1))
            case .imageSize:
                refusedImage { $0.width = 1 << 62 }
                refusedImage { $0.height = -2 }
            case .pixelChannels:
                refusedImage { $0.channels = 7 }
            case .pixelBits:
                refusedImage { $0.bits = 1 << 32 }
            case .alphaMode:
                refusedImage { $0.alpha = "inverted" }
            case .bytesPerRow:
                refusedImage { $0.bytesPerRow = 8 }
                refusedImage { $0.bytesPerRow = 1 << 20; $0.byteCount = 2 << 20 }
            case .byteCount:
                refusedImage { $0.byteCount = 23 }
            case .imageType:
                refusedImage { $0.type = "made.up" }
            case .orientation:
                refusedImage { $0.orientation = 0 }
                refusedImage { $0.orientation = 257 }
            case .metadataBlock:
                refusedImage { $0.icc = Data(count: 5_000) }
                refusedImage { $0.exif = Data(count: 5_000) }
            case .gamma:
                for value in [Double.nan, .infinity, 0, -2, 1e300] { refusedImage { $0.gamma = value } }
            case .sRGBIntent:
                refusedImage { $0.intent = 1 << 32 }
                refusedImage { $0.intent = 4 }
            case .loopCount:
                refusedImage { $0.loopCount = -5 }
                refusedImage { $0.loopCount = 1 << 40 }
                refusedAnimation(Self.animation(loopCount: 1 << 40))
            case .duration:
                for value in [Double.nan, .infinity, -0.5, 1e300, 65_536] { refusedImage { $0.duration = value } }
            case .userInfoCount:
                refusedImage { $0.userInfoCount = 65 }
                refusedImage { $0.userInfoCount = -1 }
            case .userInfoKey:
                refusedImage { $0.userInfo = [("AWS_SECRET_ACCESS_KEY", 1, Self.int(1))] }
                refusedImage { $0.userInfo = [(String(repeating: "a", count: 65), 1, Self.int(1))] }
                refusedImage { $0.userInfo = [(nil, 1, Self.int(1))] }
            case .userInfoValue:
                var text = WireWriter()
                text.string("line one\nline two")
                refusedImage { $0.userInfo = [("nukecodecs/x", 4, text.data)] }
                var long = WireWriter()
                long.string(String(repeating: "k", count: 300))
                refusedImage { $0.userInfo = [("nukecodecs/x", 4, long.data)] }
                refusedImage { $0.userInfo = [("nukecodecs/x", 2, Self.double(.nan))] }
                refusedImage { $0.userInfo = [("nukecodecs/x", 9, Data())] }
                var size = WireWriter()
                size.int(1 << 40); size.int(1 << 40)
                refusedImage { $0.userInfo = [("nukecodecs/original-size", 5, size.data)] }
            case .canvasSize:
                refusedAnimation(Self.animation(canvas: (1 << 40, 1)))
            case .backgroundColor:
                refusedAnimation(Self.animation(background: Data(count: 9)))
            case .frameCount:
                refusedAnimation(Self.animation(count: 0, frames: 0))
                refusedAnimation(Self.animation(count: 51, frames: 51))
                refusedAnimation(Self.animation(count: 1_000_000, frames: 1))
            case .frameRectangle:
                refusedAnimation(Self.animation(rectangle: (-1, 0, 3, 2)))
                refusedAnimation(Self.animation(rectangle: (0, 0, 1 << 40, 2)))
            case .frameDuration:
                for value in [Double.nan, .infinity, -1, 1e300] { refusedAnimation(Self.animation(duration: value)) }
            case .frameDisposal:
                refusedAnimation(Self.animation(disposal: 3))
            case .errorCode:
                var text = ""
                let error = try ImageCodecError(decoding: Self.failure(code: "sandbox violation"), expected: .png, codec: "host", helperText: &text)
                #expect(error.code == .decoderFailed)
                let other = try ImageCodecError(decoding: Self.failure(code: "anything at all"), expected: .png, codec: "host", helperText: &text)
                #expect(other.code == .decoderFailed)
            case .errorStage:
                var text = ""
                let error = try ImageCodecError(decoding: Self.failure(stage: "exfiltration"), expected: .png, codec: "host", helperText: &text)
                #expect(error.stage == .decoding)
            case .errorFormat:
                var text = ""
                refused({ () throws(WireReader.Malformed) in
                    _ = try ImageCodecError(decoding: Self.failure(format: "made.up"), expected: .png, codec: "host", helperText: &text)
                }, "\(field)")
            case .unreadablePath:
                var status = SandboxStatus.off("test")
                status.unreadablePaths = ["/usr/share/fonts/private"]
                #expect(try SandboxStatus(decoding: status.encoded()).unreadablePaths == status.unreadablePaths)
                for hostile in [["relative/path"], ["/line\nbreak"], [String(repeating: "/x", count: 200)], Array(repeating: "/a", count: 17)] {
                    status.unreadablePaths = hostile
                    let encoded = status.encoded()
                    refused({ () throws(WireReader.Malformed) in _ = try SandboxStatus(decoding: encoded) }, "\(field): \(hostile.first ?? "")")
                }
            case .threadCap:
                var status = SandboxStatus.off("test")
                status.threadCap = 64
                status.threadCapPerHelper = true
                let decoded = try SandboxStatus(decoding: status.encoded())
                #expect(decoded.threadCap == 64 && decoded.threadCapPerHelper)
                for hostile in [-1, WireRules.maximumThreadCap + 1, Int.max] {
                    status.threadCap = hostile
                    let encoded = status.encoded()
                    refused({ () throws(WireReader.Malformed) in _ = try SandboxStatus(decoding: encoded) }, "\(field): \(hostile)")
                }
            case .errorText:
                var text = ""
                let secret = "AKIA-not-for-clients"
                let error = try ImageCodecError(decoding: Self.failure(codec: "libpng \(secret)", text: "bad CRC \(secret)"), expected: .png,
                                                codec: "PNG (isolated)", helperText: &text)
                #expect(!error.message.contains(secret) && error.codec == "PNG (isolated)")
                #expect(!error.description.contains(secret))
                #expect(text.contains(secret))
                let escaped = WireRules.escaped("line\nforged: \u{1B}[31m" + String(repeating: "x", count: 1_000))
                #expect(!escaped.contains("\n") && !escaped.contains("\u{1B}"))
                #expect(escaped.utf8.count <= WireRules.maximumLoggedText * 4 + 3)
            }
        }
    }
}
