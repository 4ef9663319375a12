import Foundation
import NukeCore
import NukePixels
import NukeProcessing

/// One decode → resize → encode, as `nuke convert` does for each file.
struct Conversion: Sendable {
    var format: OutputFormat
    var options: ImageEncodingOptions
    /// Fit the image inside this size: a scaled decode where the codec offers one, then
    /// NukeCore's ``ImageResampler`` (box reduction, then bicubic) for the rest.
    var maxSize: ImageSize?
    /// Keep the 16-bit samples of 16-bit files (PAM, PPM and PNG hold them; JPEG encodes 8).
    var keepsHighBitDepth = true
    /// Where decoders get pixel memory: the heap, or a pool a batch shares so that each file
    /// reuses the buffers of those before it.
    var allocator: PixelAllocator = .heap
    /// Input from strangers: ``NukeCore/ImageLimits/untrusted`` and strict decoding, on the whole
    /// file (so the decoded-bytes-per-input-byte ceiling applies).
    var isUntrusted = false
    /// ``NukeCore/ImageDecodingContext/prefersFastScaling``, for `--fast-scaling`.
    var prefersFastScaling = false
    /// ``NukeCore/ImageDecodingContext/appliesOrientation``: the pixels turned upright, and
    /// ``maxSize`` the box for the image as displayed.
    var appliesOrientation = false
    /// ``NukeCore/ImageDecodingContext/colorConversion``, for `--color`.
    var colorTarget: ImageColorTarget?
    /// `--color keep`: the colour as stored even where the output cannot hold it.
    var keepsStoredColor = false
    /// Decode options linked codecs declare (`--option`, `--page`), by `userInfo` key.
    var decodingOptions: [String: any Sendable] = [:]
    /// What runs on the decoded image (`--resize`, `--crop`, `--blur`…): the first one planned into
    /// the decode (a fill decodes to cover its box), all on every frame of an animation.
    var processors: [any ImageProcessing] = []
    /// The frame of an animation written as a still image (`--frame`).
    var frame: Int?

    /// What a decode gives the encoder: an image, or an animation processed frame by frame as
    /// the encoder draws them (`image` is then its first frame).
    struct Decoded: Sendable {
        var image: Image
        var animation: ImageAnimation?
    }

    /// What converting one file produced.
    struct Result: Sendable {
        var input: String
        var output: String
        var bytesIn = 0
        var bytesOut = 0
        var size: ImageSize?
        var error: (any Error & Sendable)?
    }

    /// Decodes `data` with the shared registry, resizes it and encodes it.
    ///
    /// - Throws: ``ImageCodecError`` from the decoder or the encoder.
    func convert(_ data: Data) throws -> (data: Data, image: Image) {
        let decoded = try decode(head: data, reading: nil)
        if let animation = decoded.animation, let encoder = try format.encoder(options: options) as? any AnimatedImageEncoding {
            return (try encoder.encode(animation), decoded.image)
        }
        return (try format.encode(decoded.image, options: options), decoded.image)
    }

    /// Decodes `data` with the shared registry and resizes it: the image ``convert(_:)`` encodes.
    ///
    /// - Throws: ``ImageCodecError`` from the decoder, or `.noCodec` when the output format has no encoder.
    func decode(_ data: Data) throws -> Image {
        try decode(head: data, reading: nil).image
    }

    /// Decodes a file read in pieces, without keeping it: `head` holds its first bytes (enough for
    /// the header), `read` gives the rest. With `read` `nil`, `head` is the whole file and the
    /// registry tries its next candidate when one says the file is not for it.
    ///
    /// With `file`, the codec reads the whole file from there itself (`head` is its first bytes).
    func decode(head: Data, reading read: (() throws -> Data?)?, file: ImageFileSource? = nil) throws -> Decoded {
        // Fail before decoding when the output format has no encoder.
        _ = try format.encoder(options: options)
        // The header, read once, for the colour and the box. A JPEG's frame header may lie behind
        // long APP segments (a large ICC profile) past the first piece: more pieces are read for
        // it, as far as the metadata limit reaches. (`file` decodes read the file themselves.)
        var data = head
        var header = ImageHeader(data)
        let headerLimit = (isUntrusted ? ImageLimits.untrusted : ImageLimits.default).maxMetadataBytes + ImageFiles.Reader.headSize
        while header == nil, let read, data.count < headerLimit, let more = try read() {
            data += more
            header = ImageHeader(data)
        }
        var context = ImageDecoderRegistry.shared.makeContext(for: data)
        context.prefersHighBitDepth = keepsHighBitDepth
        context.allocator = allocator
        context.file = file
        if isUntrusted {
            context.limits = .untrusted
            context.isStrict = true
        }
        // The box is for the image as displayed. Applying the orientation, the registry turns the
        // box for the stored pixels itself; keeping the stored pixels, for EXIF orientations 5–8
        // they are turned a quarter, so fit them into the box turned the same way.
        context.appliesOrientation = appliesOrientation
        context.colorConversion = colorTarget ?? (keepsStoredColor ? nil : Self.colorTheOutputNeeds(header, format: format))
        // `--color keep`, or a format that holds the pixels as decoded: the codec's own colour.
        context.managesUncarriedColor = !keepsStoredColor && !format.holdsDecodedPixels
        context.userInfo.merge(decodingOptions) { $1 }
        let box = maxSize.map { size in
            !appliesOrientation && header?.orientation?.swapsDimensions == true ? ImageSize(width: size.height, height: size.width) : size
        }
        if let box {
            context.targetSize = box
            context.contentMode = .aspectFit
            context.prefersFastScaling = prefersFastScaling
        } else if !processors.isEmpty {
            // A leading resize becomes the decode's target: a fill decodes to cover its box.
            context = context.planned(for: processors)
            context.appliesOrientation = appliesOrientation
            context.prefersFastScaling = prefersFastScaling
        }
        // Processors run the output stage in their plan (a still image's crops with the
        // orientation as one copy, the colour on the pixels kept): `processed` finishes it.
        context.defersOutputStage = !processors.isEmpty
        let container = try read.map { try ImageDecoderRegistry.shared.decode(context, reading: $0) }
            ?? ImageDecoderRegistry.shared.decode(context)
        if !processors.isEmpty || frame != nil {
            return try processed(container, context: context, box: box)
        }
        var image = container.image
        if let animation = container.animation, format.animatedEncoder(options: options) != nil {
            // The output format holds animations: decode every frame (within the limits).
            image = try animation.image(limits: context.limits)
            // The frames come from the animation, not the output stage: its steps, here.
            var frames = ImageContainer(image: image, type: container.type, userInfo: container.userInfo)
            if appliesOrientation { frames.applyOrientation() }
            if let target = context.colorConversion, let manager = ImageColorManagement.current { try manager.convert(&frames, to: target) }
            image = frames.image
        }
        if let maxSize = box, image.width > 0, image.height > 0 {
            let size = ImageSize(width: image.width, height: image.height)
            let fit = size.fitted(to: maxSize, contentMode: .aspectFit)
            if fit != size {
                for index in image.frames.indices {
                    let bitmap = image.frames[index].bitmap
                    // Frames share the image's size; one that does not is left alone rather than enlarged.
                    guard bitmap.width >= fit.width, bitmap.height >= fit.height else { continue }
                    image.frames[index].bitmap = bitmap.resized(to: fit)
                }
            }
        }
        return Decoded(image: image)
    }

    /// With no `--color`: sRGB, through the colour manager, for a source whose colour the output
    /// cannot hold — CMYK (4 components, none of them alpha, as a JPEG or TIFF header says: no encoder here writes CMYK,
    /// and a naive CMYK → RGB formula is far from what the file's profile says), or anything
    /// bound for GIF (which carries no ICC profile). `nil`: the colour as stored, its profile kept.
    static func colorTheOutputNeeds(_ header: ImageHeader?, format: OutputFormat) -> ImageColorTarget? {
        guard !format.holdsDecodedPixels, ImageColorManagement.current != nil else { return nil }
        if format.type == .gif { return .sRGB }
        guard let header, header.componentCount == 4, header.hasAlpha == false else { return nil }
        return .sRGB
    }

    /// The decoded container through ``processors``: an animation for an output that holds one
    /// (every frame decoded, turned upright, converted, resized and processed as the encoder
    /// draws it), otherwise a still image — frame ``frame`` of an animation, or frame 0.
    private func processed(_ container: ImageContainer, context: ImageDecodingContext, box: ImageSize?) throws -> Decoded {
        let fit: [any ImageProcessing] = box.map { [ImageProcessors.Resize(size: $0, contentMode: .aspectFit)] } ?? []
        var container = container
        if context.defersOutputStage {
            if container.animation == nil, (frame ?? 0) == 0 {
                // A still image: its first frame, the output stage in the processors' plan.
                container.image.frames = [container.image.frames[0]]
                return Decoded(image: try container.processed(by: fit + processors, finishing: context).image)
            }
            try container.finishOutputStage(for: context)
        }
        // Steps the output stage took on the container's image, for frames drawn from the animation.
        let orientation = container.userInfo[.appliedOrientationKey] as? ImageOrientation ?? .up
        var frameSteps: [any ImageProcessing] = []
        if let target = context.colorConversion, ImageColorManagement.current != nil {
            frameSteps.append(ImageProcessors.ColorConversion(to: target))
        }
        if let animation = container.animation {
            if let frame {
                guard frame < animation.frameCount else {
                    throw ImageCodecError(.unsupported, stage: .decoding, format: container.type,
                                          message: "--frame \(frame): the animation has \(animation.frameCount) frames (0…\(animation.frameCount - 1))")
                }
                let still = try (frameSteps + fit + processors).reduce(animation.frame(at: frame).canvas.oriented(orientation)) { try $1.process($0) }
                return Decoded(image: Image(bitmap: still))
            }
            if format.animatedEncoder(options: options) != nil {
                guard animation.frameCount <= context.limits.maxFrameCount else {
                    throw ImageCodecError(.limitExceeded, stage: .decoding, format: container.type,
                                          message: "the animation has \(animation.frameCount) frames, more than the limit of \(context.limits.maxFrameCount)")
                }
                let processed = try animation.processed(by: frameSteps + fit + processors, orientation: orientation)
                let first = try processed.frame(at: 0).canvas
                return Decoded(image: Image(frames: [ImageFrame(bitmap: first, duration: processed.frameInfos.first?.duration)], loopCount: processed.loopCount),
                               animation: processed)
            }
        } else if let frame, frame != 0 {
            throw ImageCodecError(.unsupported, stage: .decoding, format: container.type, message: "--frame \(frame): the image is not animated (only frame 0)")
        }
        var image = container.image
        image.frames = [image.frames[0]]
        image.bitmap = try (fit + processors).reduce(image.bitmap) { try $1.process($0) }
        return Decoded(image: image)
    }

    /// Decodes a file read in pieces straight into a file of a format whose encoder takes rows
    /// (PAM): a decoder that produces rows in order (JPEG) hands them to the file as it goes, so
    /// the image is never held whole; others are decoded, then written from storage. Returns the
    /// image's size.
    func decodeRows(head: Data, reading read: () throws -> Data?, encoder: any ImageRowEncoding, to stream: FileOutputStream) throws -> ImageSize? {
        var context = ImageDecoderRegistry.shared.makeContext(for: head)
        context.prefersHighBitDepth = keepsHighBitDepth
        context.allocator = allocator
        // A format that holds the pixels as decoded (PAM): the codec's own colour, as djpeg writes it.
        context.managesUncarriedColor = false
        let file = FailureRecordingStream(stream)
        let sink = SizeRecordingSink(encoder.rowSink(writingTo: file))
        do {
            _ = try ImageDecoderRegistry.shared.decode(context, reading: read, rowsTo: sink)
        } catch {
            // A failed write is the file's error, not the decoder's.
            if let streamError = file.failure { throw streamError }
            throw error
        }
        return sink.size
    }

    /// Whether every linked codec of the format `head` starts like decodes only complete files
    /// (no progressive decoding): reading such a file in pieces would only copy it again.
    static func needsWholeFile(_ head: Data) -> Bool {
        guard let type = ImageType(head) else { return false }
        let codecs = ImageCodecs.linked.filter { $0.info.type == type }
        return !codecs.isEmpty && codecs.allSatisfy { !$0.info.capabilities.contains(.progressive) }
    }

    /// Whether every decoder the shared registry has for `head`'s format reads files itself
    /// (``NukeCore/ImageCodecCapabilities/readsFiles``): not when the format is isolated, as a
    /// helper cannot open the file.
    static func readsFiles(_ head: Data) -> Bool {
        guard let type = ImageType(head) else { return false }
        let codecs = ImageDecoderRegistry.shared.registeredCodecs.filter { $0.type == type && $0.capabilities.contains(.decode) }
        return !codecs.isEmpty && codecs.allSatisfy { $0.capabilities.contains(.readsFiles) }
    }

    /// Reads `input`, converts it and writes `output`; failures are in the result.
    func run(input: String, output: String) -> Result {
        var result = Result(input: input, output: output)
        do {
            // Read in pieces and handed to the decoder as they come: the input is never held whole.
            let decoded: Decoded
            if let encoder = try format.encoder(options: options) as? any ImageRowEncoding,
               maxSize == nil, processors.isEmpty, frame == nil, !isUntrusted, !appliesOrientation, colorTarget == nil {
                // Pixels as decoded, at full size: rows go from the decoder to the file as they are produced.
                let reader = try ImageFiles.Reader(path: input)
                let head = try reader.head()
                var size: ImageSize?
                result.bytesOut = try ImageFiles.write(to: output) { stream in
                    size = try decodeRows(head: head, reading: { try reader.next() }, encoder: encoder, to: stream)
                }
                result.bytesIn = reader.bytesRead
                result.size = size
                return result
            }
            if isUntrusted {
                let data = try ImageFiles.read(input)
                result.bytesIn = data.count
                decoded = try decode(head: data, reading: nil)
            } else {
                let reader = try ImageFiles.Reader(path: input)
                let head = try reader.head()
                if Self.needsWholeFile(head), Self.readsFiles(head), let file = ImageFileSource(path: input) {
                    // Its codec reads the file where it needs to (TIFF): the file is never held.
                    result.bytesIn = file.size
                    decoded = try decode(head: head, reading: nil, file: file)
                } else if Self.needsWholeFile(head) {
                    // Its codec decodes only complete files (HEIF): one read of the file's size
                    // rather than pieces appended to a growing buffer.
                    let data = try ImageFiles.read(input)
                    result.bytesIn = data.count
                    decoded = try decode(head: data, reading: nil)
                } else {
                    decoded = try decode(head: head, reading: { try reader.next() })
                    result.bytesIn = reader.bytesRead
                }
            }
            let image = decoded.image
            // Streamed into a temporary file renamed at the end: the whole file never exists in memory.
            result.bytesOut = try ImageFiles.write(to: output) { stream in
                if let animation = decoded.animation, let encoder = format.animatedEncoder(options: options) {
                    // Frames drawn, processed, encoded and written one at a time.
                    try encoder.encode(animation, to: &stream)
                } else {
                    try format.write(image, options: options, to: &stream)
                }
            }
            result.size = ImageSize(width: image.width, height: image.height)
        } catch let error as ImageCodecError {
            result.error = error
        } catch let error as FileError {
            result.error = error
        } catch {
            result.error = FileError(path: input, reason: String(describing: error))
        }
        return result
    }
}

/// The file a row sink writes, recording the stream's own error: the sink reports a failed
/// write as the decode's `.internalFailure`, the tool reports the file's error.
private final class FailureRecordingStream: ImageOutputStream {
    private let stream: FileOutputStream
    private(set) var failure: (any Error)?

    init(_ stream: FileOutputStream) {
        self.stream = stream
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        do {
            try stream.write(bytes)
        } catch {
            failure = error
            throw error
        }
    }
}

/// A row sink that records the image's size on its way to another.
private final class SizeRecordingSink: ImageRowSink {
    private let sink: any ImageRowSink
    private(set) var size: ImageSize?

    init(_ sink: any ImageRowSink) {
        self.sink = sink
    }

    func begin(width: Int, height: Int, pixelFormat: PixelFormat, alphaMode: AlphaMode) throws(ImageCodecError) {
        size = ImageSize(width: width, height: height)
        try sink.begin(width: width, height: height, pixelFormat: pixelFormat, alphaMode: alphaMode)
    }

    func write(rows: UnsafeRawBufferPointer, count: Int, bytesPerRow: Int) throws(ImageCodecError) {
        try sink.write(rows: rows, count: count, bytesPerRow: bytesPerRow)
    }
}
