import Foundation
import NukeCore
import NukeNetpbm

/// What `nuke convert` writes: an encoded format from the registry, or Netpbm.
enum OutputFormat: Equatable, CustomStringConvertible {
    /// Encoded through ``ImageEncoderRegistry``.
    case encoded(ImageType)
    /// PAM: the decoded pixels as they are (gray, gray+alpha, RGB or RGBA; 8 or 16 bits).
    case pam
    /// PPM (colour) or PGM (gray), alpha dropped.
    case pnm

    /// The format for a `--to` value or a file extension; `nil` when unknown.
    init?(name: String) {
        switch name.lowercased() {
        case "pam": self = .pam
        case "ppm", "pgm", "pnm": self = .pnm
        default:
            guard let type = ImageType(filenameExtension: name) else { return nil }
            self = .encoded(type)
        }
    }

    /// The extension of files written in this format.
    var fileExtension: String {
        switch self {
        case .pam: return "pam"
        case .pnm: return "ppm"
        case .encoded(let type): return type.filenameExtensions.first ?? "img"
        }
    }

    var description: String {
        switch self {
        case .pam: return "PAM"
        case .pnm: return "PPM"
        case .encoded(let type): return type.name
        }
    }

    /// Writes the image in this format.
    ///
    /// - Throws: ``ImageCodecError`` from the encoder (`.noCodec` when none is registered).
    func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        switch self {
        case .pam: return Netpbm.pam(image.bitmap)
        case .pnm: return Netpbm.pnm(image.bitmap)
        case .encoded(let type): return try ImageEncoderRegistry.shared.encode(image, as: type, options: options)
        }
    }

    /// Writes the image in this format into `stream`: Netpbm straight from the bitmap's
    /// storage, encoded formats through the encoder's streaming path.
    ///
    /// - Throws: ``ImageCodecError`` from the encoder (`.noCodec` when none is registered), or the stream's error.
    func write(_ image: Image, options: ImageEncodingOptions, to stream: inout some ImageOutputStream) throws {
        switch self {
        case .pam: try Netpbm.writePAM(image.bitmap, to: &stream)
        case .pnm: try Netpbm.writePNM(image.bitmap, to: &stream)
        case .encoded(let type): try ImageEncoderRegistry.shared.encode(image, as: type, options: options, to: &stream)
        }
    }
}
