internal import CNukeCore
import Synchronization

/// The codecs linked into this program, found without any call from the app.
///
/// A plugin places a record in the `nuke_codecs` linker section:
///
/// ```swift
/// @section("nuke_codecs") @used
/// let myCodecRecord: ImageCodecs.Record = { ImageCodecs.announce(MyCodec.codec) }
/// ```
///
/// Records are plain data, so nothing runs before `main`. The first use of ``linked`` (which
/// ``ImageDecoderRegistry/shared`` and ``ImageEncoderRegistry/shared`` make) calls each record
/// once and sorts what they announced by priority (highest first), then format identifier.
public enum ImageCodecs {
    /// A record in the `nuke_codecs` section: a C function that calls ``announce(_:)``.
    public typealias Record = @convention(c) () -> Void

    /// Adds a codec to ``linked``. Called from a plugin's record during discovery.
    public static func announce(_ codec: ImageCodec) {
        announced.withLock { $0.append(codec) }
    }

    /// Every codec linked into the program, in registration order.
    public static var linked: [ImageCodec] { discovered }

    private static let announced = Mutex<[ImageCodec]>([])

    private static let discovered: [ImageCodec] = {
        var count = 0
        if let records = nukecore_codec_records(&count) {
            for index in 0..<count {
                records[index]?()
            }
        }
        let codecs = announced.withLock { codecs -> [ImageCodec] in
            defer { codecs.removeAll() }
            return codecs
        }
        // Deterministic: priority (highest first), then format id, then name.
        return codecs.sorted {
            if $0.info.priority != $1.info.priority { return $0.info.priority > $1.info.priority }
            if $0.info.type.rawValue != $1.info.type.rawValue { return $0.info.type.rawValue < $1.info.type.rawValue }
            return $0.info.name < $1.info.name
        }
    }()
}
