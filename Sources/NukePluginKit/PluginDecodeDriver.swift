#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import NukeCore

/// What the core does around every plugin's decoder, on every path — the registry, a session,
/// NukeIsolation's helper and the plugin's Nuke-style decoder called directly — so that a plugin
/// writes none of it:
///
/// - **limits**: on the direct path, no byte reaches the plugin until its header hook has read
///   the header and the limits have been checked against it (the registry's gate does the same
///   on its paths); every image the plugin returns is held to the limits too;
/// - **cancellation**: checked before the plugin is asked for more and when it returns an image,
///   which a cancelled decode then does not return;
/// - **decode to size**: an image larger than the context's target is resampled to the plan's
///   final size (``NukeCore/ImageScalePlan``: Pillow's `thumbnail` rule), every frame of it, and
///   reports ``NukeCore/ImageContainer/UserInfoKey/originalSizeKey`` and
///   ``NukeCore/ImageContainer/UserInfoKey/decodeScaleKey``, then premultiplied when the context
///   prefers premultiplied alpha. A plugin whose codec reduces natively
///   (JPEG's DCT scaling, libwebp's scaler, a resampler fed row by row) returns what it made, with
///   the stored size in its header event or in `originalSizeKey`; the driver finishes the rest;
/// - **animations**: a final image with an ``NukeCore/ImageContainer/animation`` takes its loop
///   count, its first frame's duration and ``NukeCore/ImageContainer/UserInfoKey/frameCountKey``
///   from it;
/// - **strict decoding**: a final image whose `userInfo` reports warnings
///   (``NukeCore/ImageContainer/UserInfoKey/warningsKey``) is refused as `.corrupt` when the
///   context is strict (``NukeCore/ImageDecodingContext/isStrict``): a plugin reports what its
///   library warned about and the core decides;
/// - **the end**: once the plugin's final image is out, asking again returns it again, without
///   the plugin (which keeps nothing for it).
///
/// A plugin that takes a row sink (``NukeCore/IncrementalImageDecoding/setRowSink(_:)``) hands
/// over rows at the final size itself: the driver cannot resample rows it never holds.
struct PluginDecodeDriver: IncrementalImageDecoding {
    private var inner: any IncrementalImageDecoding
    private let context: ImageDecodingContext
    private let codec: String?
    /// The stored size, from the plugin's header event, for the plan.
    private var storedSize: ImageSize?
    /// The final image, returned again if asked for after the decode ended (plugins keep none).
    private var final: ImageContainer?

    /// - Parameters:
    ///   - inner: The plugin's decoder.
    ///   - parseHeader: The plugin's header hook, when the driver gates the header itself (the
    ///     direct path; the registry gates its own).
    init(_ inner: any IncrementalImageDecoding, context: ImageDecodingContext, codec: String?,
         parseHeader: ((Data) -> ImageHeader.ParseResult)?) {
        self.inner = parseHeader.map { HeaderLimitGate(inner, context: context, codec: codec, parse: $0) } ?? inner
        self.context = context
        self.codec = codec
    }

    mutating func push(_ bytes: Data) { inner.push(bytes) }
    mutating func finish() { inner.finish() }
    mutating func setWantsPreviews(_ wantsPreviews: Bool) { inner.setWantsPreviews(wantsPreviews) }
    mutating func setRowSink(_ sink: any ImageRowSink) -> Bool { inner.setRowSink(sink) }

    mutating func next() throws -> ImageDecodingEvent {
        if let final { return .final(final) }
        try context.checkCancellation(codec: codec)
        switch try inner.next() {
        case .header(let header):
            storedSize = header.size
            return .header(header)
        case .preview(let container): return .preview(try finished(container))
        case .final(let container):
            // Strict decoding: what the plugin only warned about ends the decode.
            try context.checkWarnings(container.userInfo[.warningsKey] as? ImageDecodingWarnings, format: container.type, codec: codec)
            let finished = try finished(container)
            final = finished
            return .final(finished)
        case .needsMoreData: return .needsMoreData
        }
    }

    /// The plugin's image, within the limits, at the target size, unless the decode was cancelled.
    private func finished(_ container: ImageContainer) throws(ImageCodecError) -> ImageContainer {
        try context.checkCancellation(codec: codec)
        try context.checkLimits(of: container, codec: codec)
        var container = container
        if let animation = container.animation {
            // The first frame's place in the animation, from the animation itself.
            container.image.loopCount = animation.loopCount
            container.image.frames[0].duration = animation.frameInfos.first?.duration
            container.userInfo[.frameCountKey] = animation.frameCount
        }
        container.finishDecodeToSize(for: context, originalSize: storedSize)
        if context.prefersPremultipliedAlpha { container.premultiplyAlpha() }
        return container
    }
}

extension ImageDecoderPlugin {
    /// The plugin's decoder for `context`, run by the ``PluginDecodeDriver``.
    ///
    /// - Parameter gatesHeader: Whether the driver gates the header itself: on the direct path
    ///   (the Nuke-style decoder called by the app); the registry gates its own.
    @usableFromInline
    static func drivenDecoder(context: ImageDecodingContext, gatesHeader: Bool) -> any IncrementalImageDecoding {
        let hook: ((Data) -> ImageHeader.ParseResult)? = gatesHeader ? { data in Self.parseHeader(data) } : nil
        return PluginDecodeDriver(makeIncrementalDecoder(context: context), context: context, codec: codecName, parseHeader: hook)
    }
}
