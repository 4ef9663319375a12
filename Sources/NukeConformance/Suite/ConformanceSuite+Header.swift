import Foundation
import NukeCore

extension ConformanceSuite {
    /// The codec's header hook, when it has one. The core checks the limits on what the hook
    /// reads, on the host and before any decoder runs, so the hook must neither under-declare nor
    /// change its mind:
    /// - on the whole of a valid fixture it reads a header of the codec's format whose size is
    ///   at least the decoded image's (equal, or larger by a crop the format applies, or with the
    ///   sides turned by a rotation the decoder applies);
    /// - on every prefix it answers `.needsMoreData`, `.unavailable` or a header of that same
    ///   format and size.
    ///
    /// A fixture whose header the hook cannot read (a codec without a hook, or SVG, whose
    /// plugin has none) is skipped: the gate lets it through and the decoder judges it.
    public func checkHeader(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.header, fixture)
        guard let hook = codec.parseHeader, let data = load(fixture, into: &result) else {
            if codec.parseHeader == nil { result.skipped.append("\(fixture.file): the codec has no header hook") }
            return result
        }
        guard case .parsed(let header) = hook(data) else {
            result.skipped.append("\(fixture.file): the hook reads no header from it (\(hook(data)))")
            return result
        }
        guard let image = expectImage(decodeOnce(data), fixture, "decode", &result)?.image else { return result }
        result.caseCount += 1
        if header.type != codec.info.type {
            result.fail(fixture, "the hook says \(header.type.name), the codec decodes \(codec.info.type.name)")
        }
        let bounds = { (width: Int, height: Int) in width >= image.width && height >= image.height }
        if !bounds(header.width, header.height) && !bounds(header.height, header.width) {
            result.fail(fixture, "the hook declares \(header.width)×\(header.height), the decoder gives \(image.width)×\(image.height): the limits were checked on less than is decoded")
        }
        // Every prefix up to 4 KiB, then about 64 more through the file.
        let step = max(1, data.count / 64)
        for length in Array(0..<min(data.count, 4096)) + Array(stride(from: 4096, to: data.count, by: step)) {
            result.caseCount += 1
            if case .parsed(let early) = hook(data.prefix(length)),
               early.type != header.type || early.width != header.width || early.height != header.height {
                result.fail(fixture, "the hook reads \(early) from the first \(length) bytes and \(header) from the whole file")
                break
            }
        }
        return result
    }
}
