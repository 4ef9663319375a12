#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import Synchronization

/// Tiny files of every format, which a helper decodes before its sandbox is installed, so that
/// each codec library reads what it reads lazily (tables, plugins, locale data) while it still
/// may.
///
/// The host encodes them once per process and sends them as a helper's first message; a helper
/// encodes only the formats the host did not send. Encoding in every helper would start encoders
/// that a helper never uses: x265 and aom alone took about 20 of a cold start's 35 ms.
enum WarmUpSamples {
    /// The host's samples as a `.warmUp` payload for `formats` (every registered format when
    /// `nil`), made once per set: the samples, then the formats to prepare.
    static func payload(for formats: Set<ImageType>?) -> Data {
        let key = formats.map { $0.map(\.rawValue).sorted() }
        if let cached = payloads.withLock({ $0[key] }) { return cached }
        let types = formats.map { Array($0) } ?? ImageDecoderRegistry.shared.registeredFormats
        let samples = make(for: types)
        var writer = WireWriter()
        writer.int(samples.count)
        for (type, data) in samples.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            writer.string(type.rawValue)
            writer.bytes(data)
        }
        // Older helpers stop reading here.
        writer.int(key?.count ?? -1)
        for type in key ?? [] { writer.string(type) }
        let payload = writer.data
        payloads.withLock { $0[key] = payload }
        return payload
    }

    private static let payloads = Mutex<[[String]?: Data]>([:])

    /// A 2 × 2 image encoded as each of `types` that has an encoder.
    static func make(for types: some Sequence<ImageType>) -> [ImageType: Data] {
        let tiny = Image(bitmap: Bitmap(width: 2, height: 2, pixelFormat: .rgba8, bytes: [UInt8](repeating: 200, count: 16)))
        var samples: [ImageType: Data] = [:]
        for type in types {
            samples[type] = try? ImageEncoderRegistry.shared.encode(tiny, as: type)
        }
        return samples
    }

    /// The samples in a `.warmUp` payload, and the formats to prepare (`nil`: every registered
    /// format); what is malformed is left out.
    static func decode(_ payload: Data) -> (samples: [ImageType: Data], formats: Set<ImageType>?) {
        var reader = WireReader(payload)
        guard let count = try? reader.int(), count >= 0, count <= payload.count / 16 else { return ([:], nil) }
        var samples: [ImageType: Data] = [:]
        for _ in 0..<count {
            guard let type = try? reader.string(), let data = try? reader.bytes() else { return (samples, nil) }
            samples[ImageType(rawValue: type)] = data
        }
        guard let formatCount = try? reader.int(), formatCount >= 0, formatCount <= payload.count else { return (samples, nil) }
        var formats: Set<ImageType> = []
        for _ in 0..<formatCount {
            guard let type = try? reader.string() else { return (samples, nil) }
            formats.insert(ImageType(rawValue: type))
        }
        return (samples, formats)
    }
}
