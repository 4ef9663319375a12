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

    /// A 2 × 2 image encoded as each of `types` that has an encoder. HEIC, HEIF and AVIF come
    /// ready-made (below): encoding them would load libheif and start x265 or aom in the host,
    /// about 10 ms of a thumbnail's CPU, for a sample only the helper's decoder reads.
    static func make(for types: some Sequence<ImageType>) -> [ImageType: Data] {
        let tiny = Image(bitmap: Bitmap(width: 2, height: 2, pixelFormat: .rgba8, bytes: [UInt8](repeating: 200, count: 16)))
        var samples: [ImageType: Data] = [:]
        for type in types {
            samples[type] = readyMade[type] ?? (try? ImageEncoderRegistry.shared.encode(tiny, as: type))
        }
        return samples
    }

    /// 2 × 2 grey images with alpha made with Debian's heif-enc 1.15.1 (`heif-enc -q 50`, x265;
    /// `-A`, aom), base64. The HEIF sample is the HEIC file: it warms up the same decoder.
    private static let readyMade: [ImageType: Data] = {
        let heic = Data(base64Encoded: "AAAAHGZ0eXBoZWljAAAAAG1pZjFoZWljbWlhZgAAAvxtZXRhAAAAAAAAACFoZGxyAAAAAAAAAABwaWN0AAAAAAAAAAAAAAAAAAAAAA5waXRtAAAAAAACAAAAGGlkYXQAAAAAAAIAAgAAAAAAAgACAAAAYGlsb2MBAAAAREAABAABAAAAAAAAAyAAAQAAAAAAAAArAAIAAQAAAAAAAAABAAAAAAAAAAgAAwAAAAAAAANLAAEAAAAAAAAAIwAEAAEAAAAAAAAAAQAAAAgAAAAIAAAAYmlpbmYAAAAAAAQAAAAVaW5mZQIAAAEAAQAAaHZjMQAAAAAVaW5mZQIAAAAAAgAAZ3JpZAAAAAAVaW5mZQIAAAEAAwAAaHZjMQAAAAAVaW5mZQIAAAAABAAAZ3JpZAAAAAGxaXBycAAAAYRpcGNvAAAAdmh2Y0MBA3AAAAAAAAAAAAAe8AD8/fj4AAAPAyAAAQAYQAEMAf//A3AAAAMAkAAAAwAAAwAeugJAIQABACpCAQEDcAAAAwCQAAADAAADAB6gIIEFluqumubgQEDAgAAAAwCAAAADAIQiAAEABkQBwXPBiQAAABRpc3BlAAAAAAAAAEAAAABAAAAAFGlzcGUAAAAAAAAAAgAAAAIAAAAQcGl4aQAAAAADCAgIAAAAcWh2Y0MBBAgAAAAAAAAAAAAe8AD8/Pj4AAAPAyAAAQAXQAEMAf//BAgAAAMAn/gAAAMAAB66AkAhAAEAJkIBAQQIAAADAJ/4AAADAAAewIIEFluqumubAgAAAwACAAADAAIQIgABAAZEAcFzwYkAAAAUaXNwZQAAAAAAAABAAAAAQAAAABRpc3BlAAAAAAAAAAIAAAACAAAADnBpeGkAAAAAAQgAAAAnYXV4QwAAAAB1cm46bXBlZzpoZXZjOjIwMTU6YXV4aWQ6MQAAAAAlaXBtYQAAAAAAAAAEAAECgQIAAgIDhAADAoUGAAQDB4iJAAAANmlyZWYAAAAAAAAADmRpbWcAAgABAAEAAAAOZGltZwAEAAEAAwAAAA5hdXhsAAQAAQACAAAAVm1kYXQAAAAnKAGvEyExlvhOUKeW+2EDNDJVMWi5T6Vz3QpQk3J+uP7yh5PFYoLgAAAAHygBriZCSiTn1w2z/Ke8XYVUc1OybCBiRCkSgGP19K4=")
        let avif = Data(base64Encoded: "AAAAHGZ0eXBhdmlmAAAAAGF2aWZtaWYxbWlhZgAAAZhtZXRhAAAAAAAAACFoZGxyAAAAAAAAAABwaWN0AAAAAAAAAAAAAAAAAAAAAA5waXRtAAAAAAABAAAANGlsb2MAAAAAREAAAgACAAAAAAG8AAEAAAAAAAAAFAABAAAAAAHQAAEAAAAAAAAAGgAAADhpaW5mAAAAAAACAAAAFWluZmUCAAAAAAEAAGF2MDEAAAAAFWluZmUCAAAAAAIAAGF2MDEAAAAA12lwcnAAAACxaXBjbwAAABNjb2xybmNseAACAAIABoAAAAAMYXYxQ4EAHAAAAAAUaXNwZQAAAAAAAAACAAAAAgAAAA5waXhpAAAAAAEIAAAAOGF1eEMAAAAAdXJuOm1wZWc6bXBlZ0I6Y2ljcDpzeXN0ZW1zOmF1eGlsaWFyeTphbHBoYQAAAAAMYXYxQ4EADAAAAAAUaXNwZQAAAAAAAAACAAAAAgAAABBwaXhpAAAAAAMICAgAAAAeaXBtYQAAAAAAAAACAAEEgYYHiAACBIIDhIUAAAAaaXJlZgAAAAAAAAAOYXV4bAACAAEAAQAAADZtZGF0EgAKBBgANhUyChgAKKEAAiEbrIASAAoIGAA2CBAQNCAyDBgACiiihAAAsBKdYA==")
        return [.heic: heic, .heif: heic, .avif: avif].compactMapValues { $0 }
    }()

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
