#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which of an image's metadata an encoder writes (``ImageEncodingOptions/metadata``).
///
/// Every encoder (JPEG, PNG, WebP, GIF, HEIF/AVIF) asks ``Image/metadataToWrite(options:writesGray:)``
/// and writes what it returns, so the rules are the same in every format:
/// - EXIF's Orientation always agrees with the pixels: it is the image's
///   ``Image/orientation``, so an image whose orientation was applied
///   (``ImageDecodingContext/appliesOrientation``) is written with Orientation 1.
/// - An ICC profile is written only over pixels of its colour space (an RGB profile over RGB
///   pixels, a gray one over gray), never a CMYK profile over the RGB pixels a CMYK JPEG decodes to.
public struct ImageMetadataPolicy: Sendable, Hashable, CustomStringConvertible {
    /// How much is kept.
    public enum Kept: String, Sendable, Hashable, CaseIterable {
        /// EXIF, XMP and the ICC profile.
        case all
        /// Only what displays the image correctly: the ICC profile, and the orientation (a minimal
        /// EXIF block) when the pixels are not upright. No camera data, location, serial numbers,
        /// embedded thumbnails or XMP. What the CLI's and the service's thumbnails keep.
        case display
        /// Nothing: no EXIF, XMP or ICC profile.
        case none
    }

    /// How much is kept.
    public var kept: Kept
    /// Remove the location when EXIF or XMP is kept: EXIF's GPS IFD is removed, and an XMP packet
    /// that mentions GPS is left out (XMP is not edited).
    public var removesLocation: Bool

    /// Creates a policy.
    public init(kept: Kept, removesLocation: Bool = false) {
        self.kept = kept
        self.removesLocation = removesLocation
    }

    /// Everything the image carries (the default, as Nuke's encoders).
    public static let all = ImageMetadataPolicy(kept: .all)
    /// Everything but the location.
    public static let allButLocation = ImageMetadataPolicy(kept: .all, removesLocation: true)
    /// Only what displays the image correctly.
    public static let display = ImageMetadataPolicy(kept: .display)
    /// Nothing.
    public static let none = ImageMetadataPolicy(kept: .none)

    public var description: String { kept.rawValue + (removesLocation && kept == .all ? " without location" : "") }
}

/// What an encoder writes besides the pixels: ``Image/metadataToWrite(options:writesGray:)``.
public struct ImageMetadataToWrite: Sendable, Hashable {
    /// The EXIF block (from the TIFF header on, without `Exif\0\0`), its Orientation set to the
    /// image's orientation.
    public var exif: Data?
    /// The XMP packet.
    public var xmp: Data?
    /// The ICC profile, only when its colour space is the output's.
    public var iccProfile: Data?
}

extension Image {
    /// The metadata an encoder writes for this image under `options`
    /// (``ImageEncodingOptions/metadata`` and ``ImageEncodingOptions/preservesColorProfile``).
    ///
    /// - Parameters:
    ///   - options: The encoder's options: their ``ImageEncodingOptions/metadata`` and
    ///     ``ImageEncodingOptions/preservesColorProfile``.
    ///   - writesGray: `true` when the encoder writes gray pixels (a gray JPEG or PNG); then only
    ///     a gray ICC profile is written, otherwise only an RGB one.
    public func metadataToWrite(options: ImageEncodingOptions, writesGray: Bool) -> ImageMetadataToWrite {
        let policy = options.metadata
        var result = ImageMetadataToWrite()
        if policy.kept != .none, options.preservesColorProfile, let icc = iccProfile,
           ICCProfileHeader(icc)?.colorSpace == (writesGray ? .gray : .rgb) {
            result.iccProfile = icc
        }
        switch policy.kept {
        case .none:
            break
        case .display:
            if orientation != .up { result.exif = ExifBlock.orientationOnly(orientation).data }
        case .all:
            if let exif, !exif.isEmpty, var block = ExifBlock(exif) {
                if !block.setOrientation(orientation), orientation != .up { block = .orientationOnly(orientation) }
                if policy.removesLocation { block.removeLocation() }
                result.exif = block.data
            } else if orientation != .up {
                result.exif = ExifBlock.orientationOnly(orientation).data
            }
            if let xmp, !xmp.isEmpty, !(policy.removesLocation && xmp.range(of: Data("GPS".utf8)) != nil) {
                result.xmp = xmp
            }
        }
        return result
    }
}

/// The fields of an ICC profile's 128-byte header that say which pixels it describes.
public struct ICCProfileHeader: Sendable, Hashable {
    /// The data colour space (header bytes 16–19).
    public enum ColorSpace: Sendable, Hashable {
        /// `RGB `.
        case rgb
        /// `GRAY`.
        case gray
        /// `CMYK`.
        case cmyk
        /// Any other signature (`Lab `, `YCbr`, ...).
        case other(String)
    }

    /// The pixels the profile describes.
    public var colorSpace: ColorSpace
    /// The device class (bytes 12–15): `mntr`, `scnr`, `prtr`, `spac`, `link`, ...
    public var deviceClass: String

    /// Reads the header; `nil` when the data is shorter than a header or its size field or its
    /// `acsp` signature is wrong.
    public init?(_ profile: Data) {
        let bytes = [UInt8](profile.prefix(128))
        guard bytes.count == 128, bytes[36...39].elementsEqual(Array("acsp".utf8)) else { return nil }
        let size = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard size >= 128, size <= profile.count else { return nil }
        let signature = String(decoding: bytes[16...19], as: UTF8.self)
        switch signature {
        case "RGB ": colorSpace = .rgb
        case "GRAY": colorSpace = .gray
        case "CMYK": colorSpace = .cmyk
        default: colorSpace = .other(signature)
        }
        deviceClass = String(decoding: bytes[12...15], as: UTF8.self)
    }
}
