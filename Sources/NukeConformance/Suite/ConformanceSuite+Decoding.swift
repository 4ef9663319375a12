import Foundation
import NukeCore

/// What one decode produced, comparable across runs.
enum DecodeOutcome: Sendable, Equatable, CustomStringConvertible {
    /// The decoder returned an image.
    case image(ImageContainer)
    /// The decoder threw ``ImageCodecError``.
    case error(ImageCodecError)
    /// The decoder threw an error of another type (a defect).
    case foreignError(String)
    /// The codec made no decoder for the data.
    case declined

    static func == (lhs: DecodeOutcome, rhs: DecodeOutcome) -> Bool {
        switch (lhs, rhs) {
        case let (.image(a), .image(b)): a.image == b.image && a.isPreview == b.isPreview
        case let (.error(a), .error(b)): a.code == b.code
        case let (.foreignError(a), .foreignError(b)): a == b
        case (.declined, .declined): true
        default: false
        }
    }

    var container: ImageContainer? {
        if case .image(let container) = self { return container }
        return nil
    }

    var description: String {
        switch self {
        case .image(let c): "an image (\(c.image.bitmap)\(c.isPreview ? ", preview" : ""))"
        case .error(let e): "ImageCodecError \(e.code): \(e.message)"
        case .foreignError(let e): "an error that is not an ImageCodecError: \(e)"
        case .declined: "no decoder (the codec declined the data)"
        }
    }
}

extension ConformanceSuite {
    /// A context for `data` with the suite's limits, asking for the codec's own colour: the suite
    /// holds a codec to its reference decoder (djpeg's CMYK → RGB formula, for instance), and the
    /// registry's colour rule (``NukeCore/ImageDecodingContext/managesUncarriedColor``) is the
    /// core's, tested with the colour manager.
    func context(_ data: Data, isCompleted: Bool = true, limits: ImageLimits? = nil, highBitDepth: Bool = false) -> ImageDecodingContext {
        var context = ImageDecodingContext(data: data, isCompleted: isCompleted, prefersHighBitDepth: highBitDepth, limits: limits ?? options.limits)
        context.managesUncarriedColor = false
        return context
    }

    /// Makes a fresh decoder for the context, or `nil` when the codec declines the data.
    func makeDecoder(_ context: ImageDecodingContext) -> (any ImageDecoding)? {
        codec.makeDecoder?(context)
    }

    /// Decodes complete data on a fresh decoder instance.
    func decodeOnce(_ data: Data, limits: ImageLimits? = nil, highBitDepth: Bool = false) -> DecodeOutcome {
        let context = context(data, limits: limits, highBitDepth: highBitDepth)
        guard let decoder = makeDecoder(context) else { return .declined }
        return outcome { try decoder.decode(data) }
    }

    /// Decodes complete data through a registry holding only the codec under test.
    func decodeThroughRegistry(_ data: Data, limits: ImageLimits? = nil, highBitDepth: Bool = false) -> DecodeOutcome {
        let registry = ImageDecoderRegistry(codecs: [codec])
        return outcome { try registry.decode(context(data, limits: limits, highBitDepth: highBitDepth)) }
    }

    func outcome(_ body: () throws -> ImageContainer) -> DecodeOutcome {
        do {
            return .image(try body())
        } catch let error as ImageCodecError {
            return .error(error)
        } catch {
            return .foreignError("\(type(of: error)): \(error)")
        }
    }

    /// Reads a fixture's bytes, recording a failure when it cannot.
    func load(_ fixture: Fixture, into result: inout ConformanceResult) -> Data? {
        do {
            return try fixture.data()
        } catch {
            result.fail(fixture, "cannot read \(fixture.url.path): \(error)")
            return nil
        }
    }

    /// A result for `check` on `fixture`, with the codec's decoder verified to exist.
    func start(_ check: ConformanceCheck, _ fixture: Fixture) -> ConformanceResult {
        var result = ConformanceResult(check: check, fixtures: [fixture.file])
        if codec.makeDecoder == nil, check != .sniffing {
            result.fail(fixture, "the codec \(codec.info.name) has no decoder")
        }
        return result
    }

    /// The expected size of a valid fixture's image: the manifest's, when it gives one.
    func expectedSize(_ fixture: Fixture) -> (width: Int, height: Int)? {
        guard let width = fixture.width, let height = fixture.height else { return nil }
        return (width, height)
    }
}
