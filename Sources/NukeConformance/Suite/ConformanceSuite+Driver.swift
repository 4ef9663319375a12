import Foundation
import NukeCore

/// The checks of what the core promises for every plugin, whichever plugin it is: decode to
/// size, cancellation and final verdicts. A plugin built on NukePluginKit gets them from the
/// core's decode driver without writing them; the checks make sure nothing it does undoes them.
extension ConformanceSuite {
    /// A valid fixture decoded with a target a third of its size (through the codec's decoder and
    /// through a registry) comes back at the size the core's plan gives, a pixel either way for a
    /// codec's rounding, and reports the original size (or, for a format of several renditions,
    /// the size of the one it decoded). Codecs that do not declare
    /// `ImageCodecCapabilities.scaledDecode` (Nuke-style decoders return the
    /// full size) are skipped.
    public func checkDecodeToSize(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.decodeToSize, fixture)
        guard codec.info.capabilities.contains(.scaledDecode) else {
            result.skipped.append("\(fixture.file): the codec does not declare scaledDecode")
            return result
        }
        guard let data = load(fixture, into: &result),
              let full = expectImage(decodeOnce(data), fixture, "decode at full size", &result)?.image else { return result }
        let original = ImageSize(width: full.width, height: full.height)
        guard original.width >= 3 || original.height >= 3 else {
            result.skipped.append("\(fixture.file): \(original) is too small to reduce")
            return result
        }
        let target = ImageSize(width: max(1, original.width / 3), height: max(1, original.height / 3))
        var sized = context(data)
        sized.targetSize = target
        let registry = ImageDecoderRegistry(codecs: [codec])
        let outcomes: [(String, DecodeOutcome)] = [
            ("decoder", makeDecoder(sized).map { decoder in outcome { try decoder.decode(data) } } ?? .declined),
            ("registry", outcome { try registry.decode(sized) }),
        ]
        for (route, outcome) in outcomes {
            result.caseCount += 1
            guard let container = expectImage(outcome, fixture, "\(route) with a \(target) target", &result) else { continue }
            // Without originalSizeKey the decode says it did not reduce: the image must not need it.
            let reported = container.userInfo[ImageContainer.UserInfoKey.originalSizeKey] as? ImageSize ?? original
            if container.userInfo[ImageContainer.UserInfoKey.originalSizeKey] == nil, sized.scalePlan(for: original) != nil {
                result.fail(fixture, "\(route) with a \(target) target: no originalSizeKey in userInfo")
                continue
            }
            // A format with several renditions (ICO's entries) may decode a smaller one, and
            // reports that one's size; none may be larger than the image.
            if reported.width > original.width || reported.height > original.height {
                result.fail(fixture, "\(route) with a \(target) target: originalSizeKey says \(reported), the image is \(original)")
            }
            let expected = ImageScalePlan(originalSize: reported, target: target, contentMode: sized.contentMode, prefersFastScaling: false).finalSize
            let size = ImageSize(width: container.image.width, height: container.image.height)
            if abs(size.width - expected.width) > 1 || abs(size.height - expected.height) > 1 {
                result.fail(fixture, "\(route) with a \(target) target: \(size), expected \(expected) (the core's plan for \(reported))")
            }
        }
        return result
    }

    /// A decode whose token was cancelled before it started ends in `.cancelled` without an
    /// image: through a registry in one go, and fed in pieces as a session feeds it.
    public func checkCancellation(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.cancellation, fixture)
        guard let data = load(fixture, into: &result) else { return result }
        let registry = ImageDecoderRegistry(codecs: [codec])
        let token = ImageDecodingCancellation()
        token.cancel()
        var cancelled = context(data)
        cancelled.cancellation = token

        result.caseCount += 1
        switch outcome({ try registry.decode(cancelled) }) {
        case .error(let error) where error.code == .cancelled: break
        case let other: result.fail(fixture, "registry with a cancelled token: \(other), expected cancelled")
        }

        var pieces = context(Data(data.prefix(64)), isCompleted: false)
        pieces.cancellation = token
        guard var (decoder, _) = registry.incrementalDecoder(for: pieces) else { return result }
        result.caseCount += 1
        let next = data.pieces(ofSize: max(1, data.count / 4))
        var events: DecodeOutcome = .declined
        do {
            feeding: while let piece = next() {
                decoder.push(piece)
                while true {
                    switch try decoder.next() {
                    case .needsMoreData: continue feeding
                    case .header: continue
                    case .preview(let preview), .final(let preview):
                        events = .image(preview)
                        break feeding
                    }
                }
            }
            if case .declined = events {
                decoder.finish()
                events = .image(try decoder.finalImage(format: codec.info.type))
            }
        } catch let error as ImageCodecError {
            events = .error(error)
        } catch {
            events = .foreignError("\(error)")
        }
        switch events {
        case .error(let error) where error.code == .cancelled: break
        case let other: result.fail(fixture, "fed in pieces with a cancelled token: \(other), expected cancelled")
        }
        return result
    }

    /// An invalid fixture the codec refuses for a reason other than "not mine" (corrupt,
    /// truncated, over a limit) ends the decode with that error: a catch-all decoder registered
    /// after the codec, as Nuke apps register one, is not tried.
    public func checkFinalVerdicts(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.finalVerdicts, fixture)
        guard let data = load(fixture, into: &result) else { return result }
        guard case .error(let verdict) = decodeThroughRegistry(data), verdict.code.endsSearch else {
            result.skipped.append("\(fixture.file): the codec does not end the search on it")
            return result
        }
        let registry = ImageDecoderRegistry(codecs: [codec])
        registry.register(priority: -1_000, name: "catch-all") { _ in CatchAll() }
        result.caseCount += 1
        switch outcome({ try registry.decode(context(data)) }) {
        case .error(let error) where error.code == verdict.code: break
        case let other: result.fail(fixture, "with a catch-all decoder registered after the codec: \(other), expected \(verdict.code)")
        }
        return result
    }
}

/// A decoder that takes anything and returns one pixel: a catch-all such as Nuke apps register.
private struct CatchAll: ImageDecoding {
    func decode(_ data: Data) throws -> ImageContainer {
        ImageContainer(image: Image(bitmap: Bitmap(width: 1, height: 1, pixelFormat: .rgba8, bytes: [0, 0, 0, 255])), type: nil, isPreview: false)
    }
}
