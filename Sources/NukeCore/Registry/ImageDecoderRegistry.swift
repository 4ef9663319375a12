#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Chooses a decoder for image data and decodes with it.
///
/// ``shared`` holds every codec plugin linked into the program, found by itself on first
/// use: an app that lists `NukeJPEG` in its Package.swift decodes JPEG with no registration
/// call. ``init()`` makes an empty registry, for tests and for apps that want full control.
///
/// Candidates are tried by priority, highest first; among equal priorities the most recently
/// registered first (so a decoder an app registers at startup wins over a plugin for its
/// format). ``decode(_:)-(ImageDecodingContext)`` falls through to the next candidate only when
/// one says the data is not for it (`.noCodec`, or `.unsupported`: a variant it does not read),
/// and reports every decoder it tried. Every other verdict is final
/// (``ImageCodecError/Code-swift.struct/endsSearch``): corrupt or incomplete data, a limit
/// exceeded, a cancellation. A catch-all registered as a fallback decodes what no format's decoder
/// accepts, never what a format's own decoder refused.
///
/// Each codec may also provide a header hook (``ImageCodec/parseHeader``,
/// ``ImageDecoderRegistering/parseHeader(_:)``): ``parseHeader(_:)`` reads the size from the first
/// bytes before any decoder exists.
///
/// Thread-safe. Registration takes a lock; no user code (decoder initialisers, matchers, header
/// hooks) runs while it is held.
public final class ImageDecoderRegistry: Sendable {
    /// The registry of every linked codec plugin.
    public static let shared = ImageDecoderRegistry(codecs: ImageCodecs.linked)

    /// A handle to one registration, for ``unregister(_:)``.
    public typealias Registration = ImageCodecRegistration

    private let registrations = CodecRegistrations<ImageCodec>()
    private let limitsValue = Mutex(ImageLimits.default)
    private let allocatorValue = Mutex(PixelAllocator.heap)

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
        get { limitsValue.withLock { $0 } }
        set { limitsValue.withLock { $0 = newValue } }
    }

    /// Where decoders get pixel memory, for contexts this registry creates. Default: ``PixelAllocator/heap``.
    ///
    /// Set `PixelAllocator.pool(_:)` (NukePixels) to let a program that decodes many images reuse pixel
    /// memory: a bitmap's buffer goes back to the pool when the bitmap is released, and the next
    /// decode of a similar size takes it instead of asking the system for new pages.
    public var allocator: PixelAllocator {
        get { allocatorValue.withLock { $0 } }
        set { allocatorValue.withLock { $0 = newValue } }
    }

    // MARK: - Registering

    /// Registers a codec's decoder. Codecs without a decoder are ignored (and return a
    /// registration that unregisters nothing).
    @discardableResult
    public func register(_ codec: ImageCodec) -> Registration {
        guard codec.makeDecoder != nil || codec.makeIncrementalDecoder != nil else { return Registration(id: 0) }
        return registrations.add(priority: codec.info.priority, type: codec.info.type, info: codec.info, factory: codec)
    }

    /// Registers a decoder type, which decides from the data whether it applies. Its
    /// ``ImageDecoderRegistering/parseHeader(_:)`` becomes the format's header hook.
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
        return registrations.add(priority: priority, type: type, info: info, factory: ImageCodec(info: info, decoder: D.self))
    }

    /// Registers a closure that returns a decoder for the data it recognises, or `nil`.
    ///
    /// ```swift
    /// ImageDecoderRegistry.shared.register(for: .bmp, header: BMP.parseHeader) { context in
    ///     context.data.starts(with: [0x42, 0x4D]) ? BMPDecoder() : nil
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: When set, the decoder is only offered data sniffed as this format.
    ///   - priority: Higher is tried first; among equals the newest registration.
    ///   - name: A name for listings and errors.
    ///   - header: The format's header hook, so sessions know the size before decoding.
    ///   - match: Returns a decoder for the context, or `nil`.
    @discardableResult
    public func register(
        for type: ImageType? = nil,
        priority: Int = 0,
        name: String = "custom",
        header: (@Sendable (Data) -> ImageHeader.ParseResult)? = nil,
        _ match: @escaping @Sendable (ImageDecodingContext) -> (any ImageDecoding)?
    ) -> Registration {
        let info = ImageCodecInfo(name: name, type: type ?? ImageType(rawValue: "*"), capabilities: .decode, priority: priority)
        let codec = ImageCodec(info: info, makeDecoder: match, parseHeader: header)
        return registrations.add(priority: priority, type: type, info: info, factory: codec)
    }

    /// Removes a registration. Removing one twice does nothing.
    public func unregister(_ registration: Registration) {
        registrations.remove(registration)
    }

    /// Removes every registration.
    public func clear() {
        registrations.removeAll()
    }

    /// The registered codecs in the order they are tried.
    public var registeredCodecs: [ImageCodecInfo] {
        registrations.entries.map(\.info)
    }

    /// The formats with at least one decoder.
    public var registeredFormats: [ImageType] {
        registrations.formats
    }

    // MARK: - Decoding

    /// Makes a context for `data` with this registry's limits and allocator.
    public func makeContext(for data: Data, isCompleted: Bool = true) -> ImageDecodingContext {
        ImageDecodingContext(data: data, isCompleted: isCompleted, limits: limits, allocator: allocator)
    }

    /// Reads the header with the hook of the first codec for the data's format that has one.
    ///
    /// - Parameter data: The first bytes of the file (all of them received so far).
    /// - Returns: The header; ``ImageHeader/ParseResult/needsMoreData`` when a hook needs more
    ///   bytes (or too few arrived to sniff the format); otherwise ``ImageHeader/ParseResult/unavailable``.
    public func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        guard let type = ImageType(data) else {
            return data.count < ImageType.sniffLength ? .needsMoreData : .unavailable
        }
        for entry in registrations.entries(for: type) {
            guard let hook = entry.factory.parseHeader else { continue }
            switch hook(data) {
            case .parsed(let header): return .parsed(header)
            case .needsMoreData: return .needsMoreData
            case .unavailable: continue
            }
        }
        return .unavailable
    }

    /// Returns the first Nuke-style decoder that accepts the context, or `nil`.
    public func decoder(for context: ImageDecodingContext) -> (any ImageDecoding)? {
        for entry in registrations.entries(for: context.type) {
            if let decoder = entry.factory.nukeDecoder(for: context) { return decoder }
        }
        return nil
    }

    /// Returns the first incremental decoder that accepts the context (a plugin's own, or a
    /// Nuke-style decoder driven through the contract), with its codec's description.
    ///
    /// For a format with a header hook, the decoder sees no byte until the hook has read the
    /// header and the context's limits have been checked against it
    /// (``ImageLimits/check(header:context:inputByteCount:)``): whatever decoder an app
    /// registered, an image over the limits ends in `.limitExceeded` before it decodes.
    ///
    /// The decoder ends in the output stage the context asks for: the orientation applied
    /// (``ImageDecodingContext/appliesOrientation``) and premultiplied alpha, on previews and the
    /// final image.
    public func incrementalDecoder(for context: ImageDecodingContext) -> (decoder: any IncrementalImageDecoding, codec: ImageCodecInfo)? {
        let planned = planned(context, header: parseHeader(context.data))
        for entry in registrations.entries(for: context.type) {
            if let decoder = entry.factory.incrementalDecoder(for: planned) {
                return (ImageOutputStage.wrapping(gated(decoder, context: context, codec: entry.info), context: outputContext(context, planned)), entry.info)
            }
        }
        return nil
    }

    /// `context` as the header plans it, the same way on every path:
    /// - its target box turned a quarter when the orientation is applied and the header says the
    ///   image is stored on its side (EXIF 5–8): the box is for the image as displayed. A format
    ///   whose orientation comes after its header (a WebP's or PNG's EXIF) is planned with the box
    ///   as given;
    /// - sRGB asked for when the header says CMYK and nothing else was asked
    ///   (``ImageDecodingContext/managesUncarriedColor``).
    private func planned(_ context: ImageDecodingContext, header: ImageHeader.ParseResult) -> ImageDecodingContext {
        guard case .parsed(let header) = header else { return context }
        var planned = context
        if context.appliesOrientation, let target = context.targetSize, header.orientation?.swapsDimensions == true {
            planned.targetSize = ImageSize(width: target.height, height: target.width)
        }
        if context.colorConversion == nil, context.managesUncarriedColor, header.componentCount == 4, header.hasAlpha == false,
           ImageColorManagement.current != nil {
            planned.colorConversion = .sRGB
        }
        return planned
    }

    /// The output stage's context: the caller's, with the colour the plan chose.
    private func outputContext(_ context: ImageDecodingContext, _ planned: ImageDecodingContext) -> ImageDecodingContext {
        var output = context
        output.colorConversion = planned.colorConversion
        return output
    }

    /// `decoder` behind the header-limit gate, when the format has a header hook.
    private func gated(_ decoder: any IncrementalImageDecoding, context: ImageDecodingContext, codec: ImageCodecInfo) -> any IncrementalImageDecoding {
        guard let type = context.type, registrations.entries(for: type).contains(where: { $0.factory.parseHeader != nil }) else { return decoder }
        return HeaderLimitGate(decoder, context: context, codec: codec.codecDescription) { [self] data in parseHeader(data) }
    }

    /// The limits checked against the header the format's hook reads from `context`'s data,
    /// before any decoder is tried.
    private func checkDeclaredLimits(_ context: ImageDecodingContext, header: ImageHeader.ParseResult) throws(ImageCodecError) {
        guard case .parsed(let header) = header else { return }
        try context.limits.check(header: header, context: context, inputByteCount: context.isCompleted ? context.data.count : nil)
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

    /// Decodes with the first decoder that accepts `context`, falling through only when it says
    /// the data is not for it (``ImageCodecError/Code-swift.struct/endsSearch``).
    ///
    /// - Throws: See ``decode(_:)-(Data)``.
    public func decode(_ context: ImageDecodingContext) throws -> ImageContainer {
        // What the header declares, against the limits, before any decoder sees the data.
        let header = parseHeader(context.data)
        try checkDeclaredLimits(context, header: header)
        let planned = planned(context, header: header)
        var attempts: [ImageCodecError] = []
        for entry in registrations.entries(for: context.type) {
            if context.isCancelled {
                attempts.append(ImageCodecError(.cancelled, stage: .decoding, format: context.type, codec: entry.info.codecDescription, message: "cancelled"))
                break
            }
            guard let made = entry.factory.incrementalDecoder(for: planned) else { continue }
            var decoder = ImageOutputStage.wrapping(made, context: outputContext(context, planned))
            do {
                return try Self.decodeAll(&decoder, data: context.data, format: context.type)
            } catch {
                let wrapped = ImageCodecError.wrapping(error, stage: .decoding, format: context.type, codec: entry.info.codecDescription)
                attempts.append(wrapped)
                if wrapped.code.endsSearch || !entry.info.fallsThrough { break }
            }
        }
        guard var first = attempts.first else {
            throw noDecoderError(for: context)
        }
        first.attempts = attempts
        throw first
    }

    /// Decodes a complete file read in pieces, without keeping it: each piece goes to the
    /// decoder and is dropped, so memory holds what the decoder keeps (a few rows for PNG) rather
    /// than the whole input.
    ///
    /// The first decoder that accepts `context` (its data: the first bytes, enough to sniff) is
    /// the only one tried: pieces already given away cannot be offered to another.
    ///
    /// - Parameters:
    ///   - context: The decode's options; its ``ImageDecodingContext/data`` holds the first piece.
    ///   - read: Returns the next piece, or `nil` at the end of the file.
    /// - Throws: ``ImageCodecError``, or what `read` throws.
    public func decode(_ context: ImageDecodingContext, reading read: () throws -> Data?) throws -> ImageContainer {
        try decode(context, reading: read, sink: nil)
    }

    /// Decodes a complete file read in pieces, as ``decode(_:reading:)`` does, and hands the
    /// final image to `sink` row by row.
    ///
    /// A decoder that produces rows in order (JPEG) gives them to the sink as it decodes, so
    /// neither the input nor the full-size image is ever held whole, and the returned container's
    /// image is ``Bitmap/empty``. For the others the image is decoded as usual, its rows are handed
    /// to the sink from storage, and the container keeps it.
    ///
    /// - Parameters:
    ///   - context: The decode's options; its ``ImageDecodingContext/data`` holds the first piece.
    ///   - read: Returns the next piece, or `nil` at the end of the file.
    ///   - sink: Receives the size and layout, then every row of the final image once.
    /// - Returns: The final container: its metadata and `userInfo`, and the image when the
    ///   decoder did not take the sink.
    /// - Throws: ``ImageCodecError`` (including the sink's own), or what `read` throws.
    public func decode(_ context: ImageDecodingContext, reading read: () throws -> Data?, rowsTo sink: any ImageRowSink) throws -> ImageContainer {
        try decode(context, reading: read, sink: sink)
    }

    private func decode(_ context: ImageDecodingContext, reading read: () throws -> Data?, sink: (any ImageRowSink)?) throws -> ImageContainer {
        // The header before the decoder: the plan (the box turned, the colour, the limits) is made
        // from it, so pieces are read ahead until it parses, as far as the metadata limit reaches
        // (a JPEG's frame header may follow a large ICC profile).
        var context = context
        var ended = false
        while case .needsMoreData = parseHeader(context.data), context.data.count <= context.limits.maxMetadataBytes + Self.headerReadAhead {
            guard let piece = try read() else {
                ended = true
                break
            }
            context.data.append(piece)
        }
        var decode = try StreamingDecode(registry: self, context: context, rowsTo: sink)
        var container: ImageContainer?
        while !ended, container == nil, let piece = try read() {
            container = try decode.push(piece)
        }
        let final = try container ?? decode.finish()
        if let sink, !decode.streamsRows { try sink.write(final.image.bitmap) }
        return final
    }

    /// Bytes read past the metadata limit while looking for a header: what a format puts before
    /// its header besides metadata (a signature, a box list).
    static let headerReadAhead = 64 * 1024

    /// Gives an incremental decoder all of the data at once and returns the final image.
    static func decodeAll(_ decoder: inout any IncrementalImageDecoding, data: Data, format: ImageType?) throws -> ImageContainer {
        if !data.isEmpty { decoder.push(data) }
        decoder.finish()
        return try decoder.finalImage(format: format)
    }

    /// The error for data no decoder accepts, naming the sniffed format and what is linked.
    func noDecoderError(for context: ImageDecodingContext) -> ImageCodecError {
        let formats = registeredFormats.map(\.name)
        let available = formats.isEmpty ? "no decoders are registered" : "decoders are registered for " + formats.joined(separator: ", ")
        let what = context.type.map { "no decoder is registered for \($0.name)" } ?? "the data is not in a recognised image format"
        return ImageCodecError(.noCodec, stage: .registry, format: context.type, message: "\(what); \(available)")
    }
}
