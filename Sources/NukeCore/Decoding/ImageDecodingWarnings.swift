/// What a codec tolerated while decoding: data its C library only warned about (corrupt entropy
/// data, a bad ancillary CRC, damaged LZW data in a frame), so the image may be partly grey or
/// partly missing.
///
/// Decoders put it in ``ImageContainer/userInfo`` under ``ImageContainer/UserInfoKey/warningsKey``;
/// with ``ImageDecodingContext/isStrict`` they throw instead (``ImageDecodingContext/checkWarnings(_:format:codec:)``).
public struct ImageDecodingWarnings: Sendable, Hashable, CustomStringConvertible {
    /// How many warnings the library emitted.
    public var count: Int
    /// The first one, in the library's own words.
    public var first: String

    /// Creates a summary of `count` warnings whose first said `first`.
    public init(count: Int, first: String) {
        self.count = count
        self.first = first
    }

    public var description: String {
        count == 1 ? first : "\(first) (and \(count - 1) more warnings)"
    }
}

extension ImageContainer.UserInfoKey {
    /// What the codec tolerated, as ``ImageDecodingWarnings``; absent when it warned about nothing.
    public static let warningsKey: ImageContainer.UserInfoKey = "nukecodecs/warnings"
}

extension ImageDecodingContext {
    /// Throws when the decode is strict and the codec warned: a strict decode refuses data the
    /// library only tolerated.
    ///
    /// - Throws: ``ImageCodecError`` `.corrupt` with the first warning.
    public func checkWarnings(_ warnings: ImageDecodingWarnings?, format: ImageType?, codec: String?) throws(ImageCodecError) {
        guard isStrict, let warnings, warnings.count > 0 else { return }
        throw ImageCodecError(.corrupt, stage: .decoding, format: format, codec: codec,
                              message: "strict decoding refuses what the codec only warned about: \(warnings)")
    }
}
