import Dispatch
import Foundation
import NukeConformance
import NukeCore
import NukeIsolation
import NukeNetpbm
import NukePipelineTestServer
import NukeSession
import Testing
@testable import NukePipeline

/// Issue 59's path-equivalence matrix: each input decoded on every path a user meets — the
/// registry in one call, a session fed 4 KB pieces, the registry with every format isolated in
/// helpers, `nuke convert`, and NukePipeline from an origin on loopback — at full size and fitted
/// to a box, must end the same way: the same error code, or the same size and pixels (within one
/// level). The one-shot decode is the reference each other path is compared with. Images are
/// compared as shown: the first frame turned by the orientation the path reports.
///
/// The box is 16 px, not 256: every fixture is smaller than 256 px, and a decode to size never
/// enlarges, so a 256 px box would decode each at full size again and prove nothing about the plan.
///
/// The table is printed. A cell that disagrees fails the test, unless it is one of
/// ``knownDisagreements`` (each with the reason it is not fixed yet); a known one that starts to
/// agree fails it too, so the list only shrinks.
@Suite(.serialized) struct PathEquivalenceTests {
    enum Path: String, CaseIterable, Sendable {
        case oneShot = "one-shot", session = "session", isolated = "isolated", cli = "nuke convert", pipeline = "pipeline"
    }

    enum Outcome: Sendable, CustomStringConvertible {
        case image(Bitmap)
        case failure(ImageCodecError.Code)
        case notApplicable(String)

        var description: String {
            switch self {
            case .image(let bitmap): "\(bitmap.width)×\(bitmap.height) \(bitmap.pixelFormat)"
            case .failure(let code): "\(code)"
            case .notApplicable: "n/a"
            }
        }
    }

    struct Input: Sendable {
        var name: String
        /// A fixture's path from the checkout's root, or `nil` for ``plainData``.
        var fixture: String?
    }

    /// The inputs issue 59 names, from the committed fixtures.
    static let inputs: [Input] = [
        Input(name: "corrupt PNG", fixture: "Fixtures/png/bad-zlib.png"),
        Input(name: "over-limit JPEG", fixture: "Fixtures/jpeg/huge-dimensions.jpg"),
        Input(name: "truncated progressive JPEG", fixture: "Fixtures/jpeg/truncated-progressive.jpg"),
        Input(name: "CMYK JPEG with a profile", fixture: "Fixtures/color/cmyk-ps.jpg"),
        Input(name: "CMYK JPEG without one", fixture: "Fixtures/jpeg/cmyk-adobe.jpg"),
        Input(name: "EXIF-rotated JPEG", fixture: "Fixtures/jpeg/exif-orientation-6-le.jpg"),
        Input(name: "V3-alpha BMP", fixture: "Fixtures/bmp/rgba32-v3.bmp"),
        Input(name: "animated GIF", fixture: "Fixtures/gif/dispose-previous.gif"),
        Input(name: "SVG", fixture: "Fixtures/svg/gradients.svg"),
        Input(name: "HEIC", fixture: "Fixtures/heif/photo.heic"),
        Input(name: "closure decoder's format", fixture: nil),
    ]

    /// Independent references for the one-shot decode at full size, so that the paths agree on the
    /// right colour, not only with each other: lcms2's `transicc` of the CMYK files (Fixtures/color).
    static let references: [String: String] = [
        "CMYK JPEG with a profile": "Fixtures/color/cmyk-ps-srgb.pam",
        "CMYK JPEG without one": "Fixtures/color/cmyk-adobe-srgb.pam",
    ]

    /// Cells known to disagree with the one-shot decode, as "input / size / path", each with why.
    static let knownDisagreements: [String: String] = [:]

    static let box = ImageSize(width: 16, height: 16)

    /// The checkout's root (this file is NukePipeline/Tests/NukePipelineTests/…).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The root package's `nuke`, built by its `swift build` (the test command builds it first).
    static var nuke: String {
        ProcessInfo.processInfo.environment["NUKE_CLI"] ?? root.appendingPathComponent(".build/debug/nuke").path
    }

    @Test func everyPathEndsTheSameWay() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.nuke),
                     "the root package's nuke is needed (swift build at the checkout's root, or NUKE_CLI)")
        let registry = Self.makeRegistry()
        let isolatedRegistry = Self.makeRegistry()
        let pool = HelperPool(configuration: IsolationConfiguration(helper: .executable(path: Self.nuke), maximumHelpers: 1,
                                                                    spareHelpers: 0, startsHelpersFromZygote: false))
        IsolatedDecoding.install(on: isolatedRegistry, policy: .formats(Set(registry.registeredFormats)), pool: pool)
        let pipeline = makePipeline { $0.registry = registry }
        let folder = temporaryFolder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)

        var table: [String] = []
        var disagreements: [String: String] = [:]
        try await withServer { server in
            for input in Self.inputs {
                let data = try input.fixture.map { try Data(contentsOf: Self.root.appendingPathComponent($0)) } ?? Self.plainData
                let path = "/" + input.name.replacingOccurrences(of: " ", with: "-").replacingOccurrences(of: "'", with: "")
                server.serve(path, .init(data: data))
                for box in [nil, Self.box] {
                    let size = box.map { "\($0.width) px" } ?? "full"
                    var outcomes: [Path: Outcome] = [:]
                    outcomes[.oneShot] = await Self.offThread { Self.outcome { try registry.decode(Self.context(registry, data, box)) } }
                    outcomes[.session] = await Self.session(registry, data, box)
                    outcomes[.isolated] = input.fixture == nil
                        ? .notApplicable("a closure registered in this process is not in the helper's registry")
                        : await Self.offThread { Self.outcome { try isolatedRegistry.decode(Self.context(isolatedRegistry, data, box)) } }
                    outcomes[.cli] = input.fixture == nil
                        ? .notApplicable("a closure registered in this process is not in nuke's registry")
                        : try await Self.convert(Self.root.appendingPathComponent(input.fixture!).path, box, folder: folder)
                    outcomes[.pipeline] = await Self.pipeline(pipeline, server.url(path), box)
                    let reference = outcomes[.oneShot]!
                    // Without libgs-common (optional) there is no standard CMYK profile to convert with.
                    let standardCMYK = FileManager.default.fileExists(atPath: "/usr/share/color/icc/ghostscript/default_cmyk.icc")
                    if box == nil, let file = Self.references[input.name], standardCMYK || input.name != "CMYK JPEG without one" {
                        let expected = try Netpbm.decode(try Data(contentsOf: Self.root.appendingPathComponent(file)))
                        if let difference = Self.difference(reference, .image(expected)) {
                            disagreements["\(input.name) / full / one-shot against \(file)"] = difference
                        }
                    }
                    var row = "\(input.name) / \(size):"
                    for path in Path.allCases {
                        let outcome = outcomes[path]!
                        row += " \(path.rawValue) \(outcome);"
                        guard path != .oneShot, let difference = Self.difference(outcome, reference) else { continue }
                        disagreements["\(input.name) / \(size) / \(path.rawValue)"] = difference
                    }
                    table.append(row)
                }
            }
        }
        print("path equivalence (reference: one-shot)\n" + table.joined(separator: "\n"))
        for (cell, difference) in disagreements.sorted(by: { $0.key < $1.key }) where Self.knownDisagreements[cell] == nil {
            Issue.record("\(cell) disagrees with the one-shot decode: \(difference)")
        }
        for cell in Self.knownDisagreements.keys.sorted() where disagreements[cell] == nil {
            Issue.record("\(cell) now agrees with the one-shot decode: take it off the known disagreements")
        }
    }

    // MARK: - The paths

    static func context(_ registry: ImageDecoderRegistry, _ data: Data, _ box: ImageSize?) -> ImageDecodingContext {
        var context = registry.makeContext(for: data)
        context.targetSize = box
        context.contentMode = .aspectFit
        return context
    }

    /// A session fed 4 KB pieces.
    static func session(_ registry: ImageDecoderRegistry, _ data: Data, _ box: ImageSize?) async -> Outcome {
        let session = ImageDecodingSession(configuration: .init(registry: registry, targetSize: { _ in box }, contentMode: .aspectFit))
        var offset = 0
        while offset < data.count {
            session.append(data.subdata(in: offset..<min(offset + 4096, data.count)))
            offset += 4096
        }
        session.finish()
        for await event in session.events {
            switch event {
            case .final(let container, _): return .image(displayed(container.image))
            case .failure(let error): return .failure(error.code)
            default: continue
            }
        }
        return .failure(.internalFailure)
    }

    /// `nuke convert FILE out.png [--max-size 16x16]`; its PNG decoded, or the code its message names.
    static func convert(_ file: String, _ box: ImageSize?, folder: URL) async throws -> Outcome {
        let output = folder.appendingPathComponent(UUID().uuidString + ".png")
        var arguments = ["convert", file, output.path]
        if let box { arguments += ["--max-size", "\(box.width)x\(box.height)"] }
        let (status, message) = try await run(nuke, arguments)
        guard status == 0 else {
            let codes: [ImageCodecError.Code] = [.incomplete, .corrupt, .unsupported, .limitExceeded, .noCodec, .cancelled,
                                                 .decoderFailed, .internalFailure, .crashed, .timedOut, .sandboxViolation]
            return .failure(codes.first { message.contains(": \($0.rawValue): ") } ?? .internalFailure)
        }
        let png = try ImageDecoderRegistry(codecs: ImageCodecs.linked).decode(try Data(contentsOf: output))
        return .image(displayed(png.image))
    }

    static func pipeline(_ pipeline: ImagePipeline, _ url: URL, _ box: ImageSize?) async -> Outcome {
        do {
            let response = try await pipeline.response(for: ImageRequest(url: url, thumbnail: box.map { .init(size: $0) }))
            return .image(displayed(response.image))
        } catch ImagePipeline.Error.decodingFailed(let error) {
            return .failure(error.code)
        } catch ImagePipeline.Error.notAnImage {
            // Refused before the decode: what the registry says of data no decoder takes.
            return .failure(.noCodec)
        } catch {
            return .failure(.internalFailure)
        }
    }

    // MARK: - Helpers

    /// The first frame as it is shown: turned by its orientation (a path may leave the pixels
    /// stored and report the orientation, as Nuke's decoders do, or turn them).
    static func displayed(_ image: Image) -> Bitmap {
        image.frames[0].bitmap.oriented(image.orientation)
    }

    static func outcome(_ decode: () throws -> ImageContainer) -> Outcome {
        do {
            return .image(displayed(try decode().image))
        } catch let error as ImageCodecError {
            return .failure(error.code)
        } catch {
            return .failure(.internalFailure)
        }
    }

    /// What tells `outcome` from `reference`, or `nil` when they agree.
    static func difference(_ outcome: Outcome, _ reference: Outcome) -> String? {
        switch (outcome, reference) {
        case (.notApplicable, _): return nil
        case (.failure(let code), .failure(let expected)): return code == expected ? nil : "\(code), not \(expected)"
        case (.image(let bitmap), .image(let expected)):
            let comparison = ImageComparison(bitmap, reference: expected, tolerance: .maxDifference(1))
            return comparison.isMatch ? nil : "\(comparison)"
        default: return "\(outcome), not \(reference)"
        }
    }

    /// A blocking decode on a thread of its own, not a cooperative one.
    static func offThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }

    /// Runs a program to its end without blocking a cooperative thread; its status and stderr.
    static func run(_ program: String, _ arguments: [String]) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (status, message)
    }

    // MARK: - The closure decoder

    /// A registry of every linked codec and, as an app registers at startup, a Nuke-style decoder
    /// for a format of its own that knows nothing of target sizes.
    static func makeRegistry() -> ImageDecoderRegistry {
        let registry = ImageDecoderRegistry(codecs: ImageCodecs.linked)
        registry.register(name: "plain") { context in context.data.starts(with: Array("PLAIN1".utf8)) ? PlainDecoder() : nil }
        return registry
    }

    static let plainData = Data("PLAIN1".utf8) + Data(count: 64)

    /// Always 40 × 30, a gradient, whatever size was asked for.
    struct PlainDecoder: ImageDecoding {
        func decode(_ data: Data) throws -> ImageContainer {
            var bytes: [UInt8] = []
            for y in 0..<30 {
                for x in 0..<40 { bytes += [UInt8(x * 6), UInt8(y * 8), 128, 255] }
            }
            return ImageContainer(image: Image(bitmap: Bitmap(width: 40, height: 30, pixelFormat: .rgba8, bytes: bytes)))
        }
    }
}
