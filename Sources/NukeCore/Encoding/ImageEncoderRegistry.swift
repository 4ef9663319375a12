import Foundation
import Synchronization

/// Finds an encoder for a format.
///
/// ``shared`` holds the encoder of every linked codec plugin, found by itself on first use.
/// Keyed by ``ImageType``: the highest-priority (then newest) registration for a format wins.
/// Thread-safe; no user code runs under its lock.
public final class ImageEncoderRegistry: Sendable {
    /// The registry of every linked codec plugin's encoder.
    public static let shared = ImageEncoderRegistry(codecs: ImageCodecs.linked)

    /// A handle to one registration, for ``unregister(_:)``.
    public struct Registration: Hashable, Sendable {
        let id: UInt64
    }

    struct Entry: Sendable {
        var registration: Registration
        var priority: Int
        var info: ImageCodecInfo
        var make: @Sendable (ImageEncodingOptions) -> any ImageEncoding
    }

    private struct State: Sendable {
        var entries: [ImageType: [Entry]] = [:]
        var nextID: UInt64 = 1
    }

    private let state = Mutex(State())

    /// Creates an empty registry.
    public init() {}

    /// Creates a registry holding the given codecs' encoders.
    public init(codecs: [ImageCodec]) {
        for codec in codecs.reversed() {
            register(codec)
        }
    }

    /// Registers a codec's encoder; codecs without one are ignored.
    @discardableResult
    public func register(_ codec: ImageCodec) -> Registration {
        guard let make = codec.makeEncoder else { return Registration(id: 0) }
        return register(for: codec.info.type, priority: codec.info.priority, info: codec.info, make)
    }

    /// Registers an encoder factory for a format.
    @discardableResult
    public func register(
        for type: ImageType,
        priority: Int = 0,
        name: String = "custom",
        _ make: @escaping @Sendable (ImageEncodingOptions) -> any ImageEncoding
    ) -> Registration {
        register(for: type, priority: priority, info: ImageCodecInfo(name: name, type: type, capabilities: .encode, priority: priority), make)
    }

    private func register(for type: ImageType, priority: Int, info: ImageCodecInfo, _ make: @escaping @Sendable (ImageEncodingOptions) -> any ImageEncoding) -> Registration {
        state.withLock { state in
            let registration = Registration(id: state.nextID)
            state.nextID += 1
            var list = state.entries[type, default: []]
            let index = list.firstIndex { $0.priority <= priority } ?? list.endIndex
            list.insert(Entry(registration: registration, priority: priority, info: info, make: make), at: index)
            state.entries[type] = list
            return registration
        }
    }

    /// Removes a registration.
    public func unregister(_ registration: Registration) {
        state.withLock { state in
            for key in state.entries.keys {
                state.entries[key]?.removeAll { $0.registration == registration }
            }
        }
    }

    /// The formats that have an encoder, sorted by identifier.
    public var registeredFormats: [ImageType] {
        state.withLock { $0.entries.filter { !$0.value.isEmpty }.map(\.key) }.sorted { $0.rawValue < $1.rawValue }
    }

    /// The registered encoders, in order of format identifier and preference.
    public var registeredCodecs: [ImageCodecInfo] {
        state.withLock { state in
            state.entries.sorted { $0.key.rawValue < $1.key.rawValue }.flatMap { $0.value.map(\.info) }
        }
    }

    /// Returns an encoder for `type`, or `nil` when none is registered.
    public func encoder(for type: ImageType, options: ImageEncodingOptions = ImageEncodingOptions()) -> (any ImageEncoding)? {
        let make = state.withLock { $0.entries[type]?.first?.make }
        return make?(options)
    }

    /// Returns an encoder for `type`, or throws the error ``encode(_:as:options:)`` would.
    ///
    /// - Throws: ``ImageCodecError`` `.noCodec` naming the formats that do have encoders.
    public func requiredEncoder(for type: ImageType, options: ImageEncodingOptions = ImageEncodingOptions()) throws -> any ImageEncoding {
        guard let encoder = encoder(for: type, options: options) else {
            let formats = registeredFormats.map(\.name)
            let available = formats.isEmpty ? "no encoders are registered" : "encoders are registered for " + formats.joined(separator: ", ")
            throw ImageCodecError(.noCodec, stage: .encoding, format: type, message: "no encoder is registered for \(type.name); \(available)")
        }
        return encoder
    }

    /// Encodes `image` as `type`.
    ///
    /// - Throws: ``ImageCodecError`` `.noCodec` when no encoder is registered for `type`, or
    ///   the encoder's error.
    public func encode(_ image: Image, as type: ImageType, options: ImageEncodingOptions = ImageEncodingOptions()) throws -> Data {
        try requiredEncoder(for: type, options: options).encode(image)
    }
}
