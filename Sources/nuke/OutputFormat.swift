import Foundation
import NukeCore

/// What `nuke convert` writes: a format with an encoder in the registry, named by a file
/// extension. A format whose encoder takes a decode's rows (``NukeCore/ImageRowEncoding``: PAM,
/// PPM, PGM with NukeNetpbm) holds the pixels as decoded: the tool neither turns them upright nor
/// converts their colour unless asked, and streams a full-size decode straight into the file.
struct OutputFormat: Equatable, CustomStringConvertible {
    /// The format.
    let type: ImageType
    /// The extension of files written: the one asked for, which also tells the encoder which of
    /// its variants to write (``NukeCore/ImageEncodingOptions/filenameExtension``).
    let fileExtension: String

    /// The format for a `--to` value or a file extension; `nil` when unknown.
    init?(name: String) {
        guard let type = ImageType(filenameExtension: name) else { return nil }
        self.type = type
        fileExtension = type.filenameExtensions.contains(name.lowercased()) ? name.lowercased() : type.filenameExtensions.first ?? name
    }

    var description: String { type.name }

    /// The options with this format's file extension.
    func options(_ options: ImageEncodingOptions) -> ImageEncodingOptions {
        var options = options
        options.filenameExtension = fileExtension
        return options
    }

    /// The encoder for this format.
    ///
    /// - Throws: ``ImageCodecError`` `.noCodec` when none is registered.
    func encoder(options: ImageEncodingOptions) throws -> any ImageEncoding {
        try ImageEncoderRegistry.shared.requiredEncoder(for: type, options: self.options(options))
    }

    /// The encoder, when it writes animations; `nil` when it does not or none is registered.
    func animatedEncoder(options: ImageEncodingOptions) -> (any AnimatedImageEncoding)? {
        ImageEncoderRegistry.shared.encoder(for: type, options: self.options(options)) as? any AnimatedImageEncoding
    }

    /// Whether the format holds the pixels as decoded (its encoder takes rows).
    var holdsDecodedPixels: Bool {
        ImageEncoderRegistry.shared.encoder(for: type, options: options(ImageEncodingOptions())) is any ImageRowEncoding
    }

    /// Writes the image in this format.
    ///
    /// - Throws: ``ImageCodecError`` from the encoder (`.noCodec` when none is registered).
    func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        try encoder(options: options).encode(image)
    }

    /// Writes the image in this format into `stream`, through the encoder's streaming path.
    ///
    /// - Throws: ``ImageCodecError`` from the encoder (`.noCodec` when none is registered), or the stream's error.
    func write(_ image: Image, options: ImageEncodingOptions, to stream: inout some ImageOutputStream) throws {
        try encoder(options: options).encode(image, to: &stream)
    }
}
