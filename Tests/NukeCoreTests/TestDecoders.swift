import Foundation
@testable import NukeCore

/// Small decoders for registry tests: they recognise a one-byte "magic" and return a 1×1
/// gray image whose sample names the decoder.
struct MagicDecoder: ImageDecoderRegistering {
    static let magic: UInt8 = 0xAB
    let sample: UInt8

    init?(data: Data, context: ImageDecodingContext) {
        guard data.first == Self.magic else { return nil }
        sample = 1
    }

    init(sample: UInt8) { self.sample = sample }

    func decode(_ data: Data) throws -> ImageContainer {
        ImageContainer(image: Image(bitmap: Bitmap(width: 1, height: 1, pixelFormat: .gray8, bytes: [sample])))
    }
}

/// Always throws the given error.
struct FailingDecoder: ImageDecoding {
    let error: ImageCodecError
    func decode(_ data: Data) throws -> ImageContainer { throw error }
}

/// Throws an error that is not an ImageCodecError.
struct ForeignErrorDecoder: ImageDecoding {
    struct Oops: Error {}
    func decode(_ data: Data) throws -> ImageContainer { throw Oops() }
}

extension ImageContainer {
    /// The sample of a 1×1 gray test image.
    var testSample: Int { image.bitmap.sample(x: 0, y: 0, channel: 0) }
}
