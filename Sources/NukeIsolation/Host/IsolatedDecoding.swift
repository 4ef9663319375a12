#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CNukeIsolation
import NukeCore

/// Decoding in helper processes: a crash, hang or runaway allocation in a C library costs one
/// decode, not the process.
///
/// An app that isolates decodes does two things. First thing in `main`, before anything else:
///
/// ```swift
/// IsolatedDecoding.runHelperIfRequested()   // returns at once unless started as a helper
/// ```
///
/// Then, at startup, a policy on the registry it decodes with:
///
/// ```swift
/// let pool = HelperPool()   // helpers: this program, in helper mode
/// IsolatedDecoding.install(on: .shared, policy: .knownCrashers, pool: pool)
/// let container = try ImageDecoderRegistry.shared.decode(upload)   // HEIC, AVIF, SVG: isolated
/// ```
///
/// Or one isolated decode: `decode(_:pool:)`. See Docs/Isolation.md for shipping the helper as
/// a separate program (a `swift build` product or a path in a container image), the limits, the
/// sandbox and the errors.
public enum IsolatedDecoding {
    /// The priority of the isolating registrations: above every plugin's.
    public static let priority = 1_000_000

    /// Runs the helper and exits when this program was started as one
    /// (``IsolationHelperExecutable/helperModeFlag`` in its arguments); returns at once otherwise.
    ///
    /// Call it first thing in `main`, before the app reads its own arguments or starts anything.
    public static func runHelperIfRequested() {
        let arguments = CommandLine.arguments
        guard arguments.contains(IsolationHelperExecutable.helperModeFlag) else { return }
        // Whatever the program that started this one left open (an input file, a log) is closed
        // before anything else happens: a helper keeps standard input, output and error and its
        // channel to the host, file descriptor 3.
        _ = nukeiso_close_inherited(4)
        let options = IsolationHelper.Options(arguments: arguments)
        if arguments.contains(IsolationHelperExecutable.zygoteModeFlag) {
            IsolationHelper.runZygote(options)
        }
        IsolationHelper.run(options)
    }

    /// Makes `registry` decode the formats `policy` names in `pool`'s helpers.
    ///
    /// For each isolated format that `registry` has a decoder for, a registration above every
    /// plugin's forwards the decode to a helper, where the plugin's own decoder runs; progressive
    /// sessions are forwarded chunk by chunk. Errors from the helper (`.crashed`, `.timedOut`,
    /// `.sandboxViolation`, a CPU `.limitExceeded`) end the registry's search, so a file that
    /// crashed an isolated decoder is never retried in process.
    ///
    /// - Returns: The registrations, to undo with `ImageDecoderRegistry.unregister(_:)`.
    @discardableResult
    public static func install(on registry: ImageDecoderRegistry, policy: IsolationPolicy, pool: HelperPool) -> [ImageDecoderRegistry.Registration] {
        var seen = Set<ImageType>()
        var registrations: [ImageDecoderRegistry.Registration] = []
        for codec in registry.registeredCodecs where codec.priority < priority && policy.isolates(codec.type) {
            guard seen.insert(codec.type).inserted else { continue }
            // The host reads headers with the registry's hooks, the helper's word never counts.
            let readHeader: @Sendable (Data) -> ImageHeader.ParseResult = { [weak registry] data in registry?.parseHeader(data) ?? .unavailable }
            registrations.append(registry.register(isolatedCodec(for: codec, pool: pool, readHeader: readHeader)))
        }
        return registrations
    }

    /// Decodes complete data in one of `pool`'s helpers, with the helper's registry.
    ///
    /// - Throws: ``NukeCore/ImageCodecError``: the decoder's own error, or `.crashed`,
    ///   `.timedOut`, `.sandboxViolation`, `.limitExceeded` (CPU time) when the helper did not
    ///   survive the decode.
    public static func decode(_ context: ImageDecodingContext, pool: HelperPool) throws -> ImageContainer {
        // The host's registry stands for the helper's (they link the same codec products).
        let streams = context.type.map { type in
            ImageDecoderRegistry.shared.registeredCodecs.contains { $0.type == type && $0.capabilities.contains(.progressive) }
        } ?? false
        var decoder = IsolatedIncrementalDecoder(pool: pool, context: context, codecName: "NukeIsolation", streamsInput: streams,
                                                 readHeader: { ImageDecoderRegistry.shared.parseHeader($0) })
        if !context.data.isEmpty { decoder.push(context.data) }
        decoder.finish()
        return try decoder.finalImage(format: context.type, codec: "NukeIsolation")
    }

    /// Decodes complete `data` in one of `pool`'s helpers.
    public static func decode(_ data: Data, pool: HelperPool) throws -> ImageContainer {
        try decode(ImageDecodingContext(data: data), pool: pool)
    }

    static func isolatedCodec(for codec: ImageCodecInfo, pool: HelperPool, readHeader: @escaping @Sendable (Data) -> ImageHeader.ParseResult) -> ImageCodec {
        let info = ImageCodecInfo(
            name: "\(codec.name) (isolated)",
            type: codec.type,
            // A helper cannot open the host's files: the isolated codec takes the whole input.
            capabilities: codec.capabilities.subtracting(.readsFiles),
            library: codec.library,
            libraryVersion: codec.libraryVersion,
            priority: priority,
            fallsThrough: false
        )
        return ImageCodec(info: info, makeIncrementalDecoder: { context in
            IsolatedIncrementalDecoder(pool: pool, context: context, codecName: "\(codec.codecDescription), isolated",
                                       streamsInput: codec.capabilities.contains(.progressive), readHeader: readHeader)
        })
    }
}

extension ImageCodecError.Code {
    /// An isolated decode's helper was killed from outside (by an operator, the OOM killer, or
    /// with its zygote) or its pool could not start one: not the input's fault, so the same
    /// request may succeed again (a service answers 503 with `Retry-After`, or retries once).
    public static let helperLost = ImageCodecError.Code(rawValue: "helper lost")
}
