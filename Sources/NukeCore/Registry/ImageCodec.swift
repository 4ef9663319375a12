#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a codec plugin offers: its format, capabilities, C library, and how to make its
/// decoder and encoder.
///
/// A plugin announces one with ``ImageCodecs/announce(_:)`` from a record in the
/// `nuke_codecs` linker section (see ``ImageCodecs``); an app may also register one directly
/// with ``ImageDecoderRegistry/register(_:)-(ImageCodec)`` and ``ImageEncoderRegistry/register(_:)``.
public struct ImageCodec: Sendable {
    /// What the codec is: name, format, capabilities, library and priority.
    public var info: ImageCodecInfo
    /// Creates the incremental decoder a plugin provides for the context, or returns `nil`
    /// when the data is not this codec's. The registry and `ImageDecodingSession` drive it.
    public var makeIncrementalDecoder: (@Sendable (ImageDecodingContext) -> (any IncrementalImageDecoding)?)?
    /// Creates a Nuke-style decoder for the context, or returns `nil` when the data is not this
    /// codec's. When only ``makeIncrementalDecoder`` is set, the registry adapts it
    /// (``IncrementalDecoderAdapter``).
    public var makeDecoder: (@Sendable (ImageDecodingContext) -> (any ImageDecoding)?)?
    /// Reads the header from the first bytes, before any decoder exists, so a session knows the
    /// size (and can choose a target size) before pixels are allocated. `nil`: no header hook.
    public var parseHeader: (@Sendable (Data) -> ImageHeader.ParseResult)?
    /// Creates an encoder with the options.
    public var makeEncoder: (@Sendable (ImageEncodingOptions) -> any ImageEncoding)?
    /// The decode options the codec reads (``ImageDecodingOption``), for tools to offer.
    public var decodingOptions: [ImageDecodingOption] = []
    /// A limit of the codec's own (``ImageLimits/Key``), in milliseconds, that bounds the CPU time of an isolated decode
    /// (NukeSVG's render time): the helper's CPU limit is lowered to it. `nil`: none.
    public var cpuTimeLimitKey: ImageLimits.Key?
    /// What the codec shows of a decode's `userInfo` beyond the core's fields; `nil`: nothing.
    public var describe: (@Sendable ([ImageContainer.UserInfoKey: any Sendable]) -> ImageFormatDetails?)?

    /// Creates a codec from its info and the closures that make its decoders, read its header
    /// and make its encoder; each is optional.
    public init(
        info: ImageCodecInfo,
        makeIncrementalDecoder: (@Sendable (ImageDecodingContext) -> (any IncrementalImageDecoding)?)? = nil,
        makeDecoder: (@Sendable (ImageDecodingContext) -> (any ImageDecoding)?)? = nil,
        parseHeader: (@Sendable (Data) -> ImageHeader.ParseResult)? = nil,
        makeEncoder: (@Sendable (ImageEncodingOptions) -> any ImageEncoding)? = nil
    ) {
        self.info = info
        self.makeIncrementalDecoder = makeIncrementalDecoder
        self.makeDecoder = makeDecoder
        self.parseHeader = parseHeader
        self.makeEncoder = makeEncoder
    }

    /// Creates a codec whose decoder is an ``ImageDecoderRegistering`` type, with its
    /// ``ImageDecoderRegistering/parseHeader(_:)`` as the header hook.
    public init<D: ImageDecoderRegistering>(
        info: ImageCodecInfo,
        decoder: D.Type,
        makeEncoder: (@Sendable (ImageEncodingOptions) -> any ImageEncoding)? = nil
    ) {
        self.init(info: info, makeDecoder: { D.make(context: $0) }, parseHeader: { D.parseHeader($0) }, makeEncoder: makeEncoder)
    }

    /// The incremental decoder for the context: the plugin's own, or its Nuke-style decoder driven
    /// through the contract; `nil` when the codec does not accept the data.
    func incrementalDecoder(for context: ImageDecodingContext) -> (any IncrementalImageDecoding)? {
        if let makeIncrementalDecoder { return makeIncrementalDecoder(context) }
        return makeDecoder?(context).map { ImageDecodingDriver($0, context: context) }
    }

    /// The Nuke-style decoder for the context: the plugin's own, or its incremental decoder behind
    /// an ``IncrementalDecoderAdapter``.
    func nukeDecoder(for context: ImageDecodingContext) -> (any ImageDecoding)? {
        if let makeDecoder { return makeDecoder(context) }
        // Making an incremental decoder only looks at the first bytes: one to test the data, then
        // one per decode of the adapter.
        guard let make = makeIncrementalDecoder, make(context) != nil else { return nil }
        return IncrementalDecoderAdapter { make(context) }
    }
}

extension ImageDecoderRegistering {
    /// Calls the initialiser that fits the context: complete or partially downloaded data.
    static func make(context: ImageDecodingContext) -> (any ImageDecoding)? {
        context.isCompleted
            ? Self(data: context.data, context: context)
            : Self(partiallyDownloadedData: context.data, context: context)
    }
}

/// A description of a codec, for listings such as `nuke formats`.
public struct ImageCodecInfo: Sendable, Hashable, CustomStringConvertible {
    /// A short name, such as `"NukeJPEG"` or a custom decoder's name.
    public var name: String
    /// The format.
    public var type: ImageType
    /// What the codec can do: decode, encode, progressive, animation...
    public var capabilities: ImageCodecCapabilities
    /// The C library, such as `"libjpeg-turbo"`; empty for pure Swift code.
    public var library: String
    /// The C library's version as it reports it at run time, such as `"2.1.5"`.
    ///
    /// Read when asked for, not when the codec registers: a plugin whose library is opened on
    /// first use (NukeHEIF, NukeSVG) opens it when this is read, so listing the codecs loads their
    /// libraries and registering them does not.
    public var libraryVersion: String {
        get { readLibraryVersion() }
        set { readLibraryVersion = { newValue } }
    }
    private var readLibraryVersion: @Sendable () -> String
    /// Higher is tried first; among equals, the later registration is tried first.
    public var priority: Int
    /// Whether ``ImageDecoderRegistry/decode(_:)-(ImageDecodingContext)`` may try the next decoder
    /// when this one says the data is not for it (``ImageCodecError/Code-swift.struct/endsSearch``:
    /// other verdicts are final anyway). Default `true`. NukeIsolation's registrations set it to `false`: a file
    /// an isolated decoder refused must not reach an in-process decoder of the same library.
    public var fallsThrough: Bool

    /// What the codec reduces on its own in a decode to size (``ImageCodecCapabilities/scaledDecode``),
    /// which its decoder asks the core to choose among (``ImageDecodingContext/nativeReduction(of:among:embedded:)``);
    /// `nil`: it decodes at full size and the core's resampler does all the reducing.
    public var nativeReductions: ImageNativeReductions?

    /// Creates a codec's description; a higher `priority` is tried first among codecs of the same format.
    public init(
        name: String,
        type: ImageType,
        capabilities: ImageCodecCapabilities,
        library: String = "",
        libraryVersion: @autoclosure @escaping @Sendable () -> String = "",
        priority: Int = 0,
        fallsThrough: Bool = true,
        nativeReductions: ImageNativeReductions? = nil
    ) {
        self.name = name
        self.type = type
        self.capabilities = capabilities
        self.library = library
        self.readLibraryVersion = libraryVersion
        self.priority = priority
        self.fallsThrough = fallsThrough
        self.nativeReductions = nativeReductions
    }

    /// `"libjpeg-turbo 2.1.5"`, or the name when there is no library.
    public var codecDescription: String {
        library.isEmpty ? name : (libraryVersion.isEmpty ? library : "\(library) \(libraryVersion)")
    }

    public var description: String { "\(name) [\(type.name)] \(capabilities) \(codecDescription)" }

    public static func == (lhs: ImageCodecInfo, rhs: ImageCodecInfo) -> Bool {
        lhs.name == rhs.name && lhs.type == rhs.type && lhs.capabilities == rhs.capabilities && lhs.library == rhs.library
            && lhs.priority == rhs.priority && lhs.fallsThrough == rhs.fallsThrough && lhs.nativeReductions == rhs.nativeReductions && lhs.libraryVersion == rhs.libraryVersion
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(type)
        hasher.combine(capabilities)
        hasher.combine(library)
        hasher.combine(libraryVersion)
        hasher.combine(priority)
        hasher.combine(fallsThrough)
    }
}

/// What a codec can do.
public struct ImageCodecCapabilities: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The codec decodes.
    public static let decode = ImageCodecCapabilities(rawValue: 1 << 0)
    /// The codec encodes.
    public static let encode = ImageCodecCapabilities(rawValue: 1 << 1)
    /// Previews from partial data.
    public static let progressive = ImageCodecCapabilities(rawValue: 1 << 2)
    /// Decodes to a smaller size directly (honours ``ImageDecodingContext/targetSize``).
    public static let scaledDecode = ImageCodecCapabilities(rawValue: 1 << 3)
    /// Decodes and encodes several frames.
    public static let animation = ImageCodecCapabilities(rawValue: 1 << 4)
    /// Decodes or encodes 16 bits per channel.
    public static let highBitDepth = ImageCodecCapabilities(rawValue: 1 << 5)
    /// Reads a complete file from ``ImageDecodingContext/file`` where it is given, a part at a
    /// time, instead of holding it whole.
    public static let readsFiles = ImageCodecCapabilities(rawValue: 1 << 6)

    /// The names of the capabilities present, in a fixed order.
    public var names: [String] {
        let all: [(ImageCodecCapabilities, String)] = [
            (.decode, "decode"), (.encode, "encode"), (.progressive, "progressive"),
            (.scaledDecode, "scaled-decode"), (.animation, "animation"), (.highBitDepth, "16-bit"),
            (.readsFiles, "reads-files"),
        ]
        return all.filter { contains($0.0) }.map(\.1)
    }

    public var description: String { names.joined(separator: ",") }
}
