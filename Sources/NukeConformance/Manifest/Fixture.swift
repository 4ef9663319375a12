import Foundation
import NukeCore
import NukeNetpbm

/// One input file of a ``FixtureManifest`` and what a decoder must make of it.
///
/// A *valid* fixture must decode to its ``reference`` within ``tolerance``, with the given
/// size, orientation and colour information. An *invalid* one must make the decoder throw
/// `ImageCodecError` with the ``expectedError`` code. Properties that are `nil` are not
/// checked.
public struct Fixture: Sendable, Hashable, Identifiable, CustomStringConvertible, Decodable {
    /// The input file's name, relative to ``directory`` (or an absolute path).
    public var file: String
    /// Whether a decoder must accept or reject the file.
    public var kind: Kind
    /// The reference decode (a PAM, PPM or PGM file, or a PNG with NukePNG linked), 8 bits per sample as the decoder
    /// produces by default. `nil` for invalid fixtures, or a valid one that only must decode.
    public var reference: String?
    /// A 16-bit reference, compared with a decode that sets
    /// `ImageDecodingContext.prefersHighBitDepth`.
    public var reference16: String?
    /// The largest allowed difference between a decoded sample and the reference's, in
    /// 8-bit units (scaled by 257 for ``reference16``). `nil` means 0.
    public var tolerance: Int?
    /// The image's width in pixels.
    public var width: Int?
    /// The image's height in pixels.
    public var height: Int?
    /// `true` for a progressive JPEG (or a format's equivalent).
    public var isProgressive: Bool?
    /// `true` for an interlaced PNG (or a format's equivalent).
    public var isInterlaced: Bool?
    /// The number of scans (JPEG start-of-scan markers) in the file.
    public var scans: Int?
    /// The EXIF orientation, 1–8, that the decoder must report.
    public var orientation: Int?
    /// The SHA-256 of the ICC profile the decoder must report, in lowercase hexadecimal.
    public var iccSHA256: String?
    /// The size in bytes of the ICC profile the decoder must report.
    public var iccSize: Int?
    /// The gamma the decoder must report (such as PNG `gAMA` 0.45455).
    public var gamma: Double?
    /// The sRGB rendering intent the decoder must report.
    public var sRGBIntent: Int?
    /// For an invalid fixture, the `ImageCodecError.code` the decoder must throw; `nil`
    /// accepts any `ImageCodecError`.
    public var expectedError: ExpectedError?
    /// `true` when the format stores the pixels losslessly, so an encode round trip must
    /// reproduce them exactly.
    public var isLossless: Bool?
    /// How the fixture was made, for people reading failures.
    public var madeWith: String?
    /// Anything else worth knowing about the fixture.
    public var notes: String?
    /// The folder ``file`` and the references are relative to. Set by ``FixtureManifest``.
    public var directory: URL

    /// Creates a fixture in code, for a file anywhere on disk.
    ///
    /// - Parameters:
    ///   - url: The input file.
    ///   - kind: Whether a decoder must accept or reject it.
    ///   - expectedError: For an invalid file, the code the decoder must throw; `nil` for any.
    ///   - reference: A reference decode beside the file, if any.
    ///   - tolerance: The allowed difference from the reference per sample.
    ///   - width: The expected width, if known.
    ///   - height: The expected height, if known.
    public init(
        url: URL,
        kind: Kind,
        expectedError: ExpectedError? = nil,
        reference: String? = nil,
        tolerance: Int? = nil,
        width: Int? = nil,
        height: Int? = nil
    ) {
        self.file = url.lastPathComponent
        self.directory = url.deletingLastPathComponent()
        self.kind = kind
        self.expectedError = expectedError
        self.reference = reference
        self.tolerance = tolerance
        self.width = width
        self.height = height
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        file = try c.decode(String.self, forKey: .file)
        kind = try c.decode(Kind.self, forKey: .kind)
        reference = try c.decodeIfPresent(String.self, forKey: .reference)
        reference16 = try c.decodeIfPresent(String.self, forKey: .reference16)
        tolerance = try c.decodeIfPresent(Int.self, forKey: .tolerance)
        width = try c.decodeIfPresent(Int.self, forKey: .width)
        height = try c.decodeIfPresent(Int.self, forKey: .height)
        isProgressive = try c.decodeIfPresent(Bool.self, forKey: .progressive)
        isInterlaced = try c.decodeIfPresent(Bool.self, forKey: .interlaced)
        scans = try c.decodeIfPresent(Int.self, forKey: .scans)
        orientation = try c.decodeIfPresent(Int.self, forKey: .orientation)
        iccSHA256 = try c.decodeIfPresent(String.self, forKey: .iccSHA256)
        iccSize = try c.decodeIfPresent(Int.self, forKey: .iccSize)
        gamma = try c.decodeIfPresent(Double.self, forKey: .gamma)
        sRGBIntent = try c.decodeIfPresent(Int.self, forKey: .sRGBIntent)
        expectedError = try c.decodeIfPresent(ExpectedError.self, forKey: .expectedError)
        isLossless = try c.decodeIfPresent(Bool.self, forKey: .lossless)
        madeWith = try c.decodeIfPresent(String.self, forKey: .madeWith)
        notes = try c.decodeIfPresent(String.self, forKey: .notes)
        directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }

    private enum CodingKeys: String, CodingKey {
        case file, kind, reference, reference16, tolerance, width, height, progressive, interlaced, scans
        case orientation, gamma, lossless, notes
        case iccSHA256 = "icc_sha256"
        case iccSize = "icc_size"
        case sRGBIntent = "srgb_intent"
        case expectedError = "expected_error"
        case madeWith = "made_with"
    }

    /// The file name, which identifies a fixture within its manifest.
    public var id: String { file }

    public var description: String { file }

    /// The input file.
    public var url: URL { resolve(file) }

    /// The reference decode, if any.
    public var referenceURL: URL? { reference.map(resolve) }

    /// The 16-bit reference decode, if any.
    public var reference16URL: URL? { reference16.map(resolve) }

    /// Reads the input file.
    public func data() throws -> Data { try Data(contentsOf: url) }

    /// Reads the reference decode, or returns `nil` when the fixture has none.
    ///
    /// A reference is a PAM, PPM or PGM file, or any format a linked codec reads as stored (a PNG
    /// written by Pillow, with NukePNG linked into the tests).
    ///
    /// - Throws: The file system's error, or `ImageCodecError` when no linked codec reads it.
    public func referenceBitmap() throws -> Bitmap? {
        try referenceURL.map { try Self.reference(Data(contentsOf: $0)) }
    }

    /// Reads the 16-bit reference decode, or returns `nil` when the fixture has none.
    public func reference16Bitmap() throws -> Bitmap? {
        try reference16URL.map { try Self.reference(Data(contentsOf: $0), highBitDepth: true) }
    }

    private static func reference(_ data: Data, highBitDepth: Bool = false) throws -> Bitmap {
        if data.starts(with: [UInt8(ascii: "P")]) { return try Netpbm.decode(data) }
        let context = ImageDecodingContext(data: data, prefersHighBitDepth: highBitDepth)
        return try ImageDecoderRegistry.shared.decode(context).image.bitmap
    }

    private func resolve(_ name: String) -> URL {
        name.hasPrefix("/") ? URL(fileURLWithPath: name) : directory.appendingPathComponent(name)
    }
}
