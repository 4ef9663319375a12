import Foundation
import NukeCore
import NukeNetpbm
import NukePixels
import NukeConformance
import Synchronization
import Testing

/// Tests of the conformance kit with a toy codec: a pure-Swift decoder of PAM files (the
/// reference format), registered as a custom format. The clean codec must pass every check;
/// each deliberately broken variant must be caught by the check that targets its defect.
@Suite struct ConformanceKitTests {
    static let fixtures = ToyFixtures.make()

    static func suite(_ defect: ToyPAM.Defect? = nil, options: ConformanceSuite.Options = ConformanceSuite.Options()) -> ConformanceSuite {
        ConformanceSuite(codec: ToyPAM.codec(defect), manifest: fixtures, options: options)
    }

    @Test func cleanCodecPassesEveryCheck() async {
        let report = await Self.suite().runAll()
        #expect(report.failures.isEmpty, "\(report)")
        // The toy codec has no animations: the animation check skips every fixture (the GIF
        // plugin's conformance suite exercises it).
        // Nor does it declare scaledDecode (a Nuke-style decoder returns the full size): decode
        // to size skips it too (every plugin's suite runs it).
        for check in ConformanceCheck.allCases where check != .animation && check != .decodeToSize {
            #expect((report[check]?.caseCount ?? 0) > 0, "\(check) examined nothing")
        }
        #expect(report.description.contains("passed"))
    }

    @Test(arguments: ToyPAM.Defect.allCases)
    func kitCatchesDefect(_ defect: ToyPAM.Defect) async {
        let suite = Self.suite(defect)
        let result = await suite.run(defect.caughtBy)
        #expect(!result.failures.isEmpty, "the \(defect.caughtBy) check missed \(defect)")
        #expect(result.failures.allSatisfy { $0.check == defect.caughtBy })
        // Checks that do not target the defect stay green, so a failure points at its cause.
        for check in defect.unaffected {
            let other = await suite.run(check)
            #expect(other.failures.isEmpty, "\(defect) should not fail \(check): \(other)")
        }
    }

    @Test func corruptionCatchesForeignErrors() throws {
        let fixture = try #require(Self.fixtures["rgb8.pam"])
        #expect(Self.suite().checkCorruption(fixture).passed)
        let result = Self.suite(.foreignError).checkCorruption(fixture)
        #expect(result.caseCount == 2 * ConformanceSuite.Options().corruptionCount)
        #expect(!result.failures.isEmpty)
        #expect(result.failures.first?.message.contains("not an ImageCodecError") == true, "\(result)")
    }

    @Test func wrongPixelsAreDescribed() throws {
        let fixture = try #require(Self.fixtures["rgb8.pam"])
        let result = Self.suite(.wrongPixels).checkReferenceDecode(fixture)
        let message = try #require(result.failures.first?.message)
        #expect(message.contains("first at (1, 1) channel 0"), "\(message)")
        #expect(message.contains("decoder:"))
        #expect(result.failures.contains { $0.message.hasPrefix("registry:") })
    }

    @Test func progressiveRunsRecordOnePreviewPerRow() throws {
        let fixture = try #require(Self.fixtures["gray8.pam"])
        var options = ConformanceSuite.Options()
        options.progressiveFeedings = [.byteByByte, .whole, .equalChunks(count: 2)]
        let result = Self.suite(options: options).checkProgressive(fixture)
        #expect(result.failures.isEmpty, "\(result)")
        let runs = Dictionary(uniqueKeysWithValues: result.progressiveRuns.map { ($0.feeding, $0) })
        // 5×4 gray: byte by byte, a preview as each of the 4 rows completes.
        #expect(runs[.byteByByte]?.previewCount == 4)
        #expect(runs[.byteByByte]?.rowCounts == [1, 2, 3, 4])
        #expect(runs[.whole]?.previewCount == 1)
        #expect(runs[.equalChunks(count: 2)]?.rowCounts.last == 4)
        #expect(runs[.byteByByte]?.didDecode == true)
    }

    @Test func byteByByteFeedingIsCappedBySize() throws {
        let fixture = try #require(Self.fixtures["rgba8.pam"])
        var options = ConformanceSuite.Options()
        options.byteByByteLimit = 10
        let result = Self.suite(options: options).checkProgressive(fixture)
        #expect(result.failures.isEmpty)
        #expect(!result.progressiveRuns.contains { $0.feeding == .byteByByte })
        #expect(result.skipped.contains { $0.contains("byte-by-byte") })
    }

    @Test func invalidFixturesNeedTheExpectedCode() throws {
        let truncated = try #require(Self.fixtures["truncated.pam"])
        #expect(Self.suite().checkInvalidInput(truncated).passed)
        var wrong = truncated
        wrong.expectedError = .corrupt
        let result = Self.suite().checkInvalidInput(wrong)
        #expect(result.failures.count == 2, "\(result)")   // the decoder and the registry
        #expect(result.failures.first?.message.contains("threw incomplete, expected corrupt") == true)
    }

    @Test func validFixtureThatFailsIsReported() throws {
        var fixture = try #require(Self.fixtures["truncated.pam"])
        fixture.kind = .valid
        #expect(!Self.suite().checkReferenceDecode(fixture).passed)
        #expect(!Self.suite().checkRobustness(fixture).passed)
    }

    @Test func metadataMismatchesAreReported() throws {
        var fixture = try #require(Self.fixtures["gray8.pam"])
        fixture.orientation = 6
        fixture.iccSize = 10
        fixture.gamma = 0.45455
        fixture.sRGBIntent = 0
        fixture.width = 6
        let messages = Self.suite().checkReferenceDecode(fixture).failures.map(\.message).joined(separator: "\n")
        for expected in ["orientation 1", "no ICC profile", "no gamma", "sRGB intent none", "size 5×4, expected 6×4"] {
            #expect(messages.contains(expected), "missing '\(expected)' in \(messages)")
        }
    }

    @Test func codecWithoutDecoderFails() async {
        let codec = ImageCodec(info: ImageCodecInfo(name: "Nothing", type: ToyPAM.type, capabilities: []))
        let report = await ConformanceSuite(codec: codec, manifest: Self.fixtures).runAll([.referenceDecode, .concurrency])
        #expect(report.failures.count > 1)
    }

    @Test func codecWithoutEncoderSkipsRoundTrip() throws {
        var codec = ToyPAM.codec(nil)
        codec.makeEncoder = nil
        let fixture = try #require(Self.fixtures["rgb8.pam"])
        let result = ConformanceSuite(codec: codec, manifest: Self.fixtures).checkRoundTrip(fixture)
        #expect(result.passed)
        #expect(result.skipped == ["rgb8.pam: the codec has no encoder"])
    }

    @Test func truncationLengthsAreExhaustiveForSmallFilesAndStridedForLargeOnes() {
        var options = ConformanceSuite.Options()
        options.exhaustiveTruncationLimit = 100
        options.truncationStride = 10
        let suite = Self.suite(options: options)
        #expect(suite.truncationLengths(count: 100) == Array(0..<100))
        let large = suite.truncationLengths(count: 1000)
        #expect(large.count < 250)
        #expect(large.first == 0 && large.last == 999)
        #expect(large == large.sorted() && Set(large).count == large.count)
        #expect(suite.truncationLengths(count: 1000) == large)   // seeded: reproducible
    }

    @Test func reportSummarisesPerCheck() async {
        let report = await Self.suite(.ignoresLimits).runAll([.sniffing, .limits])
        #expect(report.failureCounts[.sniffing] == 0)
        #expect((report.failureCounts[.limits] ?? 0) > 0)
        #expect(!report.passed)
        #expect(report.description.contains("limits: "))
        #expect(report.description.contains("✗"))
    }
}

// MARK: - The toy codec

/// A PAM codec in pure Swift, with switchable defects.
enum ToyPAM {
    static let type: ImageType = {
        ImageType.register("org.nukecodecs.toy-pam", name: "ToyPAM", filenameExtensions: ["pam"]) { data in
            data.starts(with: Array("P7\n".utf8))
        }
        return ImageType(rawValue: "org.nukecodecs.toy-pam")
    }()

    /// A defect and the check that must catch it.
    enum Defect: String, CaseIterable, Sendable, CustomStringConvertible {
        /// The final decode returns one wrong sample.
        case wrongPixels
        /// The final decode on an instance that produced previews returns a different image.
        case progressiveDiffers
        /// A preview claims to be the final image.
        case previewNotMarked
        /// Truncated data throws `.unsupported` instead of `.incomplete`.
        case wrongTruncationCode
        /// Truncated or corrupt data throws an error that is not an ImageCodecError.
        case foreignError
        /// Limits are never checked.
        case ignoresLimits
        /// Decoders share a scratch buffer without a lock.
        case sharedState
        /// The encoder drops the last row's first sample.
        case lossyEncoder
        /// The header hook declares half the width: the core's limits would be checked on less
        /// than is decoded.
        case underDeclaredHeader

        var caughtBy: ConformanceCheck {
            switch self {
            case .wrongPixels: .referenceDecode
            case .progressiveDiffers, .previewNotMarked: .progressive
            case .wrongTruncationCode, .foreignError: .truncation
            case .ignoresLimits: .limits
            case .sharedState: .concurrency
            case .lossyEncoder: .roundTrip
            case .underDeclaredHeader: .header
            }
        }

        /// Checks the defect must not trip.
        var unaffected: [ConformanceCheck] {
            switch self {
            case .wrongPixels: [.sniffing, .truncation, .limits]
            case .progressiveDiffers, .previewNotMarked: [.referenceDecode, .truncation, .limits, .roundTrip]
            case .wrongTruncationCode, .foreignError: [.referenceDecode, .limits, .roundTrip]
            case .ignoresLimits: [.referenceDecode, .truncation, .progressive, .roundTrip]
            case .sharedState: [.sniffing]
            case .lossyEncoder: [.referenceDecode, .truncation, .progressive, .limits]
            case .underDeclaredHeader: [.referenceDecode, .truncation, .progressive, .limits]
            }
        }

        var description: String { rawValue }
    }

    static func codec(_ defect: Defect?) -> ImageCodec {
        ImageCodec(
            info: ImageCodecInfo(name: "ToyPAM", type: type, capabilities: [.decode, .encode, .progressive, .highBitDepth]),
            makeDecoder: { context in
                context.data.starts(with: Array("P7".utf8)) || context.data.count < 2 && !context.isCompleted
                    ? Decoder(context: context, defect: defect) : nil
            },
            parseHeader: { data in
                // The decoder's own header reader, without limits (the core checks them).
                let reader = Decoder(context: ImageDecodingContext(data: data, limits: .unlimited), defect: defect)
                do {
                    let header = try reader.header(data)
                    return .parsed(ImageHeader(type: type, width: defect == .underDeclaredHeader ? (header.width + 1) / 2 : header.width, height: header.height))
                } catch let error as ImageCodecError where error.code == .incomplete {
                    return .needsMoreData
                } catch {
                    return .unavailable
                }
            },
            makeEncoder: { _ in Encoder(defect: defect) }
        )
    }

    struct Encoder: ImageEncoding {
        let defect: Defect?

        func encode(_ image: Image) throws -> Data {
            var bitmap = image.bitmap
            if defect == .lossyEncoder, bitmap.height > 0 {
                let offset = (bitmap.height - 1) * bitmap.bytesPerRow
                bitmap.withUnsafeMutableBytes { $0[offset] ^= 0x10 }
            }
            return Netpbm.pam(bitmap)
        }
    }

    /// A scratch buffer all decoders share when the defect says so (guarded by nothing that
    /// makes it correct: the lock only keeps memory safe, the read-modify-write still races).
    static let shared = Mutex<Int>(0)

    final class Decoder: ImageDecoding {
        let context: ImageDecodingContext
        let defect: Defect?
        private let previews = Mutex(0)

        init(context: ImageDecodingContext, defect: Defect?) {
            self.context = context
            self.defect = defect
        }

        struct Header {
            var width = 0, height = 0, depth = 0, maxval = 0
            var end = 0
            var format: PixelFormat { PixelFormat(channels: [.gray, .grayAlpha, .rgb, .rgba][depth - 1], bitsPerChannel: maxval > 255 ? 16 : 8) }
        }

        func fail(_ code: ImageCodecError.Code, _ message: String) -> ImageCodecError {
            ImageCodecError(code, stage: .decoding, format: ToyPAM.type, codec: "ToyPAM", message: message)
        }

        /// Reads the header; throws `.incomplete` when it is cut short.
        func header(_ data: Data) throws -> Header {
            let bytes = [UInt8](data.prefix(512))
            guard bytes.count >= 3 else { throw fail(.incomplete, "no header") }
            guard bytes.starts(with: Array("P7\n".utf8)) else { throw fail(.corrupt, "not a PAM file") }
            guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: Array("ENDHDR\n".utf8)) }) else {
                if bytes.count == 512 { throw fail(.corrupt, "header too long") }
                throw fail(.incomplete, "the header is cut short")
            }
            var header = Header()
            header.end = end + 7
            for line in String(decoding: bytes[3..<end], as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: " ")
                guard parts.count == 2 else { throw fail(.corrupt, "bad header line \(line)") }
                switch parts[0] {
                case "WIDTH": header.width = Int(parts[1]) ?? 0
                case "HEIGHT": header.height = Int(parts[1]) ?? 0
                case "DEPTH": header.depth = Int(parts[1]) ?? 0
                case "MAXVAL": header.maxval = Int(parts[1]) ?? 0
                case "TUPLTYPE": break
                default: throw fail(.corrupt, "unknown field \(parts[0])")
                }
            }
            guard header.width > 0, header.height > 0, (1...4).contains(header.depth), header.maxval == 255 || header.maxval == 65535 else {
                throw fail(.corrupt, "bad header")
            }
            if defect != .ignoresLimits {
                try context.limits.check(width: header.width, height: header.height, bytesPerPixel: outputFormat(header).bytesPerPixel,
                                         format: ToyPAM.type, codec: "ToyPAM")
            }
            return header
        }

        func outputFormat(_ header: Header) -> PixelFormat {
            let format = header.format
            return context.prefersHighBitDepth ? format : PixelFormat(channels: format.channels, bitsPerChannel: 8)
        }

        func decode(_ data: Data) throws -> ImageContainer {
            do {
                return try decodeChecked(data)
            } catch let error as ImageCodecError {
                throw misreport(error)
            }
        }

        func decodeChecked(_ data: Data) throws -> ImageContainer {
            let header = try self.header(data)
            let rowBytes = header.width * header.format.bytesPerPixel
            guard data.count - header.end >= rowBytes * header.height else {
                throw fail(.incomplete, "expected \(rowBytes * header.height) bytes of samples")
            }
            var bitmap = try Netpbm.decode(data).converted(to: outputFormat(header))
            if defect == .wrongPixels, bitmap.width > 1, bitmap.height > 1 {
                let offset = bitmap.bytesPerRow + bitmap.pixelFormat.bytesPerPixel
                bitmap.withUnsafeMutableBytes { $0[offset] ^= 0x01 }
            }
            if defect == .progressiveDiffers, previews.withLock({ $0 }) > 0 {
                bitmap.withUnsafeMutableBytes { $0[0] ^= 0x80 }
            }
            if defect == .sharedState {
                // Write our first sample into the shared slot, let others run, read it back.
                ToyPAM.shared.withLock { $0 = Int(bitmap.bytes[0]) }
                usleep(2_000)
                let sample = UInt8(truncatingIfNeeded: ToyPAM.shared.withLock { $0 })
                bitmap.withUnsafeMutableBytes { $0[0] = sample }
            }
            return ImageContainer(image: Image(bitmap: bitmap), type: ToyPAM.type)
        }

        /// The error a defective decoder throws instead of `error`.
        func misreport(_ error: ImageCodecError) -> any Error {
            switch defect {
            case .wrongTruncationCode where error.code == .incomplete: fail(.unsupported, error.message)
            case .foreignError where error.code != .limitExceeded: CocoaError(.fileReadCorruptFile)
            default: error
            }
        }

        func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
            guard let header = try? header(data) else { return nil }
            let format = outputFormat(header)
            let fileRowBytes = header.width * header.format.bytesPerPixel
            let rows = min(header.height, (data.count - header.end) / fileRowBytes)
            let lastRows = previews.withLock { $0 }
            guard rows > lastRows else { return nil }
            previews.withLock { $0 = rows }
            // The rows so far, the rest black: decode a padded copy of the data.
            var padded = data
            padded.append(Data(count: header.end + fileRowBytes * header.height - data.count))
            guard let bitmap = try? Netpbm.decode(padded).converted(to: format) else { return nil }
            return ImageContainer(image: Image(bitmap: bitmap), type: ToyPAM.type, isPreview: defect != .previewNotMarked,
                                  userInfo: [.rowCountKey: rows])
        }
    }
}

/// The toy codec's fixtures, written to a temporary folder with a manifest.json.
enum ToyFixtures {
    static func make() -> FixtureManifest {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("nuke-conformance-kit-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func bitmap(_ width: Int, _ height: Int, _ format: PixelFormat) -> Bitmap {
            // Each image starts with a different sample, so decoders sharing state get caught.
            let count = width * height * format.bytesPerPixel
            let seed = width * 31 + height * 7 + format.bytesPerPixel * 5
            return Bitmap(width: width, height: height, pixelFormat: format, bytes: (0..<count).map { UInt8(($0 * 37 + seed) & 0xFF) })
        }
        func write(_ name: String, _ data: Data) {
            try? data.write(to: directory.appendingPathComponent(name))
        }
        var entries: [[String: Any]] = []
        for (name, width, height, format) in [("gray8", 5, 4, PixelFormat.gray8), ("rgb8", 7, 3, .rgb8), ("rgba8", 4, 4, .rgba8),
                                              ("one", 1, 1, .grayAlpha8), ("rgb16", 3, 2, .rgb16)] {
            let image = bitmap(width, height, format)
            write("\(name).pam", Netpbm.pam(image))
            write("\(name).ref.pam", Netpbm.pam(image.converted(to: PixelFormat(channels: format.channels, bitsPerChannel: 8))))
            var entry: [String: Any] = [
                "file": "\(name).pam", "kind": "valid", "reference": "\(name).ref.pam", "tolerance": 0,
                "width": width, "height": height, "progressive": false, "interlaced": false, "scans": NSNull(),
                "orientation": 1, "icc_sha256": NSNull(), "icc_size": NSNull(), "gamma": NSNull(), "srgb_intent": NSNull(),
                "expected_error": NSNull(), "lossless": true, "made_with": "ConformanceKitTests", "notes": "",
            ]
            if format.bitsPerChannel == 16 {
                write("\(name).16.pam", Netpbm.pam(image))
                entry["reference16"] = "\(name).16.pam"
            }
            entries.append(entry)
        }
        let full = Netpbm.pam(bitmap(7, 3, .rgb8))
        write("truncated.pam", full.prefix(full.count - 5))
        write("bad-header.pam", Data("P7\nWIDTH x\nENDHDR\n".utf8))
        write("huge.pam", Data("P7\nWIDTH 100000\nHEIGHT 100000\nDEPTH 3\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n".utf8))
        write("not-pam.pam", Data("P9\nnot a PAM file".utf8))
        for (file, error) in [("truncated.pam", "incomplete"), ("bad-header.pam", "corrupt"), ("huge.pam", "limit"), ("not-pam.pam", "corrupt")] {
            entries.append(["file": file, "kind": "invalid", "expected_error": error, "reference": NSNull()])
        }
        let json: [String: Any] = ["format": "toy-pam", "fixtures": entries]
        if let data = try? JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys]) {
            write("manifest.json", data)
        }
        do {
            return try FixtureManifest.load(from: directory)
        } catch {
            Issue.record("cannot load the toy manifest: \(error)")
            return FixtureManifest(format: "toy-pam", directory: directory, fixtures: [])
        }
    }
}

/// ``ConformancePlan``: the declaration plugins use runs the standard checks, and catches defects.
@Suite struct ConformancePlanTests {
    @Test func cleanCodecPassesEveryCase() async {
        let plan = ConformancePlan(codec: ToyPAM.codec(nil), manifest: ConformanceKitTests.fixtures)
        let checks = Set(plan.cases.map(\.check))
        #expect(checks.isSuperset(of: [.sniffing, .referenceDecode, .invalidInput, .truncation, .corruption,
                                       .progressive, .roundTrip, .limits, .concurrency]))
        for check in plan.cases {
            let result = await plan.run(check)
            #expect(result.passed, "\(result)")
        }
    }

    @Test(arguments: ToyPAM.Defect.allCases)
    func planCatchesDefect(_ defect: ToyPAM.Defect) async {
        let plan = ConformancePlan(codec: ToyPAM.codec(defect), manifest: ConformanceKitTests.fixtures)
        var failed = false
        for check in plan.cases where check.check == defect.caughtBy {
            failed = await !plan.run(check).passed || failed
        }
        #expect(failed, "the plan's \(defect.caughtBy) cases missed \(defect)")
    }

    @Test func tooFewCasesIsAFailure() async throws {
        let plan = ConformancePlan(codec: ToyPAM.codec(nil), manifest: ConformanceKitTests.fixtures)
        let fixture = try #require(plan.manifest.invalid.first)
        // Reference decode examines valid fixtures only: on an invalid one it runs no case.
        let result = await plan.run(ConformanceCase(check: .referenceDecode, fixture: fixture, minimumCases: 1))
        #expect(!result.passed)
    }
}
