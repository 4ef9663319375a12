#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// Tiny files of every format, which a helper decodes before its sandbox is installed, so that
/// each codec library reads what it reads lazily (tables, plugins, locale data) while it still
/// may.
///
/// The host encodes them once per process and sends them as a helper's first message; a helper
/// encodes only the formats the host did not send. Encoding in every helper would start encoders
/// that a helper never uses: x265 and aom alone took about 20 of a cold start's 35 ms.
enum WarmUpSamples {
    /// The host's samples as a `.warmUp` payload, made on first use.
    static let payload: Data = {
        let samples = make(for: ImageDecoderRegistry.shared.registeredFormats)
        var writer = WireWriter()
        writer.int(samples.count)
        for (type, data) in samples.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            writer.string(type.rawValue)
            writer.bytes(data)
        }
        return writer.data
    }()

    /// A 2 × 2 image encoded as each of `types` that has an encoder.
    static func make(for types: some Sequence<ImageType>) -> [ImageType: Data] {
        let tiny = Image(bitmap: Bitmap(width: 2, height: 2, pixelFormat: .rgba8, bytes: [UInt8](repeating: 200, count: 16)))
        var samples: [ImageType: Data] = [:]
        for type in types {
            samples[type] = try? ImageEncoderRegistry.shared.encode(tiny, as: type)
        }
        return samples
    }

    /// The samples in a `.warmUp` payload; what is malformed is left out.
    static func decode(_ payload: Data) -> [ImageType: Data] {
        var reader = WireReader(payload)
        guard let count = try? reader.int(), count >= 0, count <= payload.count / 16 else { return [:] }
        var samples: [ImageType: Data] = [:]
        for _ in 0..<count {
            guard let type = try? reader.string(), let data = try? reader.bytes() else { break }
            samples[ImageType(rawValue: type)] = data
        }
        return samples
    }
}
