import Foundation
import Synchronization

/// Chooses a decoder for image data and decodes with it.
///
/// ``shared`` holds every codec plugin linked into the program, found by itself on first
/// use: an app that lists `NukeJPEG` in its Package.swift decodes JPEG with no registration
/// call. ``init()`` makes an empty registry, for tests and for apps that want full control.
///
/// Candidates are tried by priority, highest first; among equal priorities the most recently
/// registered first (so a decoder an app registers at startup wins over a plugin for its
/// format). ``decode(_:)`` falls through to the next candidate when one throws and reports
/// every decoder it tried.
///
/// Thread-safe. Registration takes a lock; no user code (decoder initialisers, matchers)
/// runs while it is held.
public final class ImageDecoderRegistry: Sendable {
    /// The registry of every linked codec plugin.
    public static let shared = ImageDecoderRegistry(codecs: ImageCodecs.linked)

    /// A handle to one registration, for ``unregister(_:)``.
    public struct Registration: Hashable, Sendable {
        let id: UInt64
    }

    struct Entry: Sendable {
        var registration: Registration
        var priority: Int
        /// When set, the entry is only considered for data sniffed as this type.
        var type: ImageType?
        var info: ImageCodecInfo
        var make: @Sendable (ImageDecodingContext) -> (any ImageDecoding)?
    }

    private struct State: Sendable {
        var entries: [Entry] = []   // kept sorted: priority desc, then newest first
        var nextID: UInt64 = 1
        var limits: ImageLimits = .default
    }

    private let state = Mutex(State())

    /// Creates an empty registry.
    public init() {}

    /// Creates a registry holding the given codecs' decoders, in the given order of preference.
    public init(codecs: [ImageCodec]) {
        // Among equal priorities the newest registration is preferred: register in reverse.
        for codec in codecs.reversed() {
            register(codec)
        }
    }

    /// The limits for contexts this registry creates. Default: ``ImageLimits/default``.
    public var limits: ImageLimits {
        get { state.withLock { $0.limits } }
        set { state.withLock { $0.limits = newValue } }
    }

    /// Registers a codec's decoder. Codecs without a decoder are ignored (and return a
    /// registration that unregisters nothing).
    @discardableResult
    public func register(_ codec: ImageCodec) -> Registration {
        guard let make = codec.makeDecoder else { return Registration(id: 0) }
        return add(priority: codec.info.priority, type: codec.info.type, info: codec.info, make: make)
    }

    /// Registers a decoder type, which decides from the data whether it applies.
    ///
    /// - Parameters:
    ///   - decoder: The decoder type.
    ///   - type: When set, the decoder is only offered data sniffed as this format.
    ///   - priority: Higher is tried first; among equals the newest registration.
    ///   - name: A name for listings and errors; defaults to the type's name.
    /// - Returns: A registration for ``unregister(_:)``.
    @discardableResult
    public func register<D: ImageDecoderRegistering>(
        _ decoder: D.Type,
        for type: ImageType? = nil,
        priority: Int = 0,
        name: String? = nil
    ) -> Registration {
        let info = ImageCodecInfo(
            name: name ?? String(describing: D.self), type: type ?? ImageType(rawValue: "*"),
            capabilities: .decode, priority: priority
        )
        return add(priority: priority, type: type, info: info, make: { D.make(context: $0) })
    }

    /// Registers a closure that returns a decoder for the data it recognises, or `nil`.
    ///
    /// ```swift
    /// ImageDecoderRegistry.shared.register { context in
    ///     context.data.starts(with: [0x42, 0x4D]) ? BMPDecoder() : nil
    /// }
    /// ```
    @discardableResult
    public func register(
        for type: ImageType? = nil,
        priority: Int = 0,
        name: String = "custom",
        _ match: @escaping @Sendable (ImageDecodingContext) -> (any ImageDecoding)?
    ) -> Registration {
        let info = ImageCodecInfo(name: name, type: type ?? ImageType(rawValue: "*"), capabilities: .decode, priority: priority)
        return add(priority: priority, type: type, info: info, make: match)
    }

    /// Removes a registration. Removing one twice does nothing.
    public func unregister(_ registration: Registration) {
        state.withLock { $0.entries.removeAll { $0.registration == registration } }
    }

    /// Removes every registration.
    public func clear() {
        state.withLock { $0.entries.removeAll() }
    }

    /// The registered codecs in the order they are tried.
    public var registeredCodecs: [ImageCodecInfo] {
        state.withLock { $0.entries.map(\.info) }
    }

    /// The formats with at least one decoder.
    public var registeredFormats: [ImageType] {
        var seen = Set<ImageType>()
        return registeredCodecs.map(\.type).filter { $0.rawValue != "*" && seen.insert($0).inserted }
    }

    /// Makes a context for `data` with this registry's limits.
    public func makeContext(for data: Data, isCompleted: Bool = true) -> ImageDecodingContext {
        ImageDecodingContext(data: data, isCompleted: isCompleted, limits: limits)
    }

    /// Returns the first decoder that accepts the context, or `nil`.
    public func decoder(for context: ImageDecodingContext) -> (any ImageDecoding)? {
        for entry in candidates(for: context) {
            if let decoder = entry.make(context) { return decoder }
        }
        return nil
    }

    /// Decodes complete data with the first decoder that accepts it, falling through to the
    /// next when one throws.
    ///
    /// - Parameter data: The complete image data.
    /// - Returns: The decoded image.
    /// - Throws: ``ImageCodecError``: `.noCodec` when no decoder accepts the data; otherwise
    ///   the first decoder's error with every attempt in ``ImageCodecError/attempts``.
    public func decode(_ data: Data) throws -> ImageContainer {
        try decode(makeContext(for: data))
    }

    /// Decodes with the first decoder that accepts `context`, falling through on errors.
    ///
    /// - Throws: See ``decode(_:)-(Data)``.
    public func decode(_ context: ImageDecodingContext) throws -> ImageContainer {
        var attempts: [ImageCodecError] = []
        for entry in candidates(for: context) {
            guard let decoder = entry.make(context) else { continue }
            do {
                return try decoder.decode(context.data)
            } catch {
                let wrapped = ImageCodecError.wrapping(error, stage: .decoding, format: context.type, codec: entry.info.codecDescription)
                if wrapped.code == .cancelled { throw wrapped }
                attempts.append(wrapped)
            }
        }
        guard var first = attempts.first else {
            throw noDecoderError(for: context)
        }
        first.attempts = attempts
        throw first
    }

    /// The error for data no decoder accepts, naming the sniffed format and what is linked.
    func noDecoderError(for context: ImageDecodingContext) -> ImageCodecError {
        let formats = registeredFormats.map(\.name)
        let available = formats.isEmpty ? "no decoders are registered" : "decoders are registered for " + formats.joined(separator: ", ")
        let what = context.type.map { "no decoder is registered for \($0.name)" } ?? "the data is not in a recognised image format"
        return ImageCodecError(.noCodec, stage: .registry, format: context.type, message: "\(what); \(available)")
    }

    /// Entries that may accept the context, in order. Taken under the lock, used outside it.
    private func candidates(for context: ImageDecodingContext) -> [Entry] {
        let entries = state.withLock { $0.entries }
        return entries.filter { $0.type == nil || $0.type == context.type }
    }

    private func add(priority: Int, type: ImageType?, info: ImageCodecInfo, make: @escaping @Sendable (ImageDecodingContext) -> (any ImageDecoding)?) -> Registration {
        state.withLock { state in
            let registration = Registration(id: state.nextID)
            state.nextID += 1
            let entry = Entry(registration: registration, priority: priority, type: type, info: info, make: make)
            // Before the first entry of equal or lower priority: newest first among equals.
            let index = state.entries.firstIndex { $0.priority <= priority } ?? state.entries.endIndex
            state.entries.insert(entry, at: index)
            return registration
        }
    }
}
