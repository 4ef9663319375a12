#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The last stage of every decode the registry runs: what the request asks of the decoded image
/// beyond decoding it, applied to previews and the final image alike, whichever plugin decoded
/// it — the orientation (``ImageDecodingContext/appliesOrientation``), the colour
/// (``ImageDecodingContext/colorConversion``) and premultiplied alpha
/// (``ImageDecodingContext/prefersPremultipliedAlpha``), in that order.
struct ImageOutputStage: IncrementalImageDecoding {
    private var inner: any IncrementalImageDecoding
    private let context: ImageDecodingContext

    /// `decoder` behind the stage, or `decoder` itself when `context` asks for nothing.
    static func wrapping(_ decoder: any IncrementalImageDecoding, context: ImageDecodingContext) -> any IncrementalImageDecoding {
        guard !context.defersOutputStage,
              context.appliesOrientation || context.prefersPremultipliedAlpha || context.colorConversion != nil else { return decoder }
        return ImageOutputStage(inner: decoder, context: context)
    }

    mutating func push(_ bytes: Data) { inner.push(bytes) }
    mutating func finish() { inner.finish() }
    mutating func setWantsPreviews(_ wantsPreviews: Bool) { inner.setWantsPreviews(wantsPreviews) }

    /// Rows are handed over as stored: a decode that turns them upright declines the sink.
    mutating func setRowSink(_ sink: any ImageRowSink) -> Bool {
        context.appliesOrientation ? false : inner.setRowSink(sink)
    }

    mutating func next() throws -> ImageDecodingEvent {
        switch try inner.next() {
        case .preview(let container): .preview(try finished(container))
        case .final(let container): .final(try finished(container))
        case let event: event
        }
    }

    private func finished(_ container: ImageContainer) throws(ImageCodecError) -> ImageContainer {
        var container = container
        try container.finishOutputStage(for: context)
        return container
    }
}

extension ImageContainer {
    /// Runs the output stage `context` asks for on this container: the orientation (unless
    /// already applied), the colour conversion (unless the decoder converted) and premultiplied
    /// alpha, in that order. What a decode with ``ImageDecodingContext/defersOutputStage`` leaves
    /// to its caller; every other decode has run it.
    ///
    /// - Throws: ``ImageCodecError`` `.unsupported` when a colour conversion is asked for and no
    ///   colour manager is linked, or the manager's error.
    public mutating func finishOutputStage(for context: ImageDecodingContext) throws(ImageCodecError) {
        if context.appliesOrientation { applyOrientation() }
        if let target = context.colorConversion, userInfo[.colorConversionKey] == nil {
            guard let manager = ImageColorManagement.current else {
                throw ImageCodecError(.unsupported, stage: .decoding, format: type,
                                      message: "converting colour to \(target) needs a colour manager: link NukeColor (Little CMS)")
            }
            try manager.convert(&self, to: target)
        }
        if context.prefersPremultipliedAlpha { premultiplyAlpha() }
    }

    /// Turns every frame upright and records the orientation applied
    /// (``UserInfoKey/appliedOrientationKey``); the image then says ``ImageOrientation/up``.
    /// The output stage's step, for frames decoded outside it (an ``ImageAnimation``'s).
    public mutating func applyOrientation() {
        let orientation = image.orientation
        guard orientation != .up else { return }
        for index in image.frames.indices {
            image.frames[index].bitmap = image.frames[index].bitmap.oriented(orientation)
        }
        image.orientation = .up
        userInfo[.appliedOrientationKey] = orientation
    }

    /// Premultiplies the alpha of every frame that has straight alpha: the output stage's step for
    /// ``ImageDecodingContext/prefersPremultipliedAlpha``, which the core's drivers run for every
    /// plugin's decoder after a decode to size.
    public mutating func premultiplyAlpha() {
        for index in image.frames.indices where image.frames[index].bitmap.alphaMode == .straight {
            image.frames[index].bitmap = image.frames[index].bitmap.premultiplied()
        }
    }
}
