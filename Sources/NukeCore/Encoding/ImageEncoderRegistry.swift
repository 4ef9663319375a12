#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Finds an encoder for a format.
///
/// ``shared`` holds the encoder of every linked codec plugin, found by itself on first use.
/// Keyed by ``ImageType``: the highest-priority (then newest) registration for a format wins.
/// Thread-safe; no user code runs under its lock.
public final class ImageEncoderRegistry: Sendable {
    /// The registry of every linked codec plugin's encoder.
    public static let shared = ImageEncoderRegistry(codecs: ImageCodecs.linked)

    /// A handle to one registration, for ``unregister(_:)``.
    public typealias Registration = ImageCodecRegistration

    private let registrations = CodecRegistrations<@Sendable (ImageEncodingOptions) -> any ImageEncoding>()

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
        return registrations.add(priority: codec.info.priority, type: codec.info.type, info: codec.info, factory: make)
    }

    /// Registers an encoder factory for a format.
    @discardableResult
    public func register(
        for type: ImageType,
        priority: Int = 0,
        name: String = "custom",
        _ make: @escaping @Sendable (ImageEncodingOptions) -> any ImageEncoding
    ) -> Registration {
        let info = ImageCodecInfo(name: name, type: type, capabilities: .encode, priority: priority)
        return registrations.add(priority: priority, type: type, info: info, factory: make)
    }

    /// Removes a registration.
    public func unregister(_ registration: Registration) {
        registrations.remove(registration)
    }

    /// The formats that have an encoder, sorted by identifier.
    public var registeredFormats: [ImageType] {
        registrations.formats.sorted { $0.rawValue < $1.rawValue }
    }

    /// The registered encoders, in order of format identifier and preference.
    public var registeredCodecs: [ImageCodecInfo] {
        let entries = registrations.entries
        return registeredFormats.flatMap { type in entries.filter { $0.type == type }.map(\.info) }
    }

    /// Returns an encoder for `type`, or `nil` when none is registered.
    public func encoder(for type: ImageType, options: ImageEncodingOptions = ImageEncodingOptions()) -> (any ImageEncoding)? {
        let make = registrations.entries.first { $0.type == type }?.factory
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

    /// Encodes `image` as `type` into `stream`, through the encoder's streaming path.
    ///
    /// - Throws: ``ImageCodecError`` `.noCodec` when no encoder is registered for `type`, the
    ///   encoder's error, or the stream's.
    public func encode(_ image: Image, as type: ImageType, options: ImageEncodingOptions = ImageEncodingOptions(), to stream: inout some ImageOutputStream) throws {
        try requiredEncoder(for: type, options: options).encode(image, to: &stream)
    }
}
