#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The colour a decode returns its pixels in (``ImageDecodingContext/colorConversion``).
public enum ImageColorTarget: Sendable, Hashable, CustomStringConvertible {
    /// sRGB (IEC 61966-2-1), what browsers assume for untagged images; the result carries no
    /// profile.
    case sRGB
    /// The RGB ICC profile given; the result carries it.
    case profile(Data)

    public var description: String {
        switch self {
        case .sRGB: "sRGB"
        case .profile(let data): "an ICC profile of \(data.count) bytes"
        }
    }
}

/// Converts decoded pixels between colour spaces: what the decode's output stage calls when
/// ``ImageDecodingContext/colorConversion`` is set. NukeColor (Little CMS 2) provides one and
/// announces it when linked (``ImageColorManagement``); the core links no colour library.
public protocol ImageColorManaging: Sendable {
    /// Converts every frame of `container`'s image to `target`, from the colour its
    /// ``ColorInfo`` (its ICC profile) or `nclx` description (``NCLXColor``) describes, or from sRGB when it
    /// describes none. Sets the colour information to describe the result and says what was
    /// done in ``ImageContainer/UserInfoKey/colorConversionKey``. Pixels it cannot convert
    /// faithfully (an HDR transfer, a profile for other channels) are left as they are, with
    /// the reason in that key.
    func convert(_ container: inout ImageContainer, to target: ImageColorTarget) throws(ImageCodecError)

    /// A converter from rows of 8-bit CMYK samples to 8-bit RGB in `target`, for a decoder whose
    /// codec produces CMYK (JPEG), through `profile` or, without one, a standard CMYK profile.
    ///
    /// - Parameters:
    ///   - profile: The file's CMYK ICC profile, if any.
    ///   - inverted: `true` for Adobe's inverted samples (255 = no ink).
    ///   - target: The colour the rows are converted to.
    ///   - pixelCount: How many pixels will be converted (the decode's output size), so that the
    ///     manager can choose between exactness and set-up time.
    /// - Returns: `nil` when no CMYK profile is available (none in the file and no standard one).
    func cmykConverter(profile: Data?, inverted: Bool, to target: ImageColorTarget, pixelCount: Int) throws(ImageCodecError) -> CMYKRowConverter?
}

/// Converts rows of CMYK samples to RGB from C: a function and its context, kept alive by
/// `owner`. A decoder hands ``function`` and ``context`` to its C shim, which calls the function
/// for each row (no Swift frame in between). One decode uses one converter, on one thread.
public final class CMYKRowConverter {
    /// `convert(context, cmyk, rgb, width)`: `width` pixels of 4 samples in, 3 out.
    public typealias Function = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UInt32) -> Void

    /// The C function.
    public let function: Function
    /// Its context.
    public let context: UnsafeMutableRawPointer?
    /// What keeps ``context`` valid.
    public let owner: AnyObject
    /// What the conversion is, for ``ImageContainer/UserInfoKey/colorConversionKey``.
    public let summary: String

    /// Creates a converter.
    public init(function: Function, context: UnsafeMutableRawPointer?, owner: AnyObject, summary: String) {
        self.function = function
        self.context = context
        self.owner = owner
        self.summary = summary
    }
}

/// The colour manager of this program: the one a linked product announced (NukeColor), or one
/// the app installed.
public enum ImageColorManagement {
    /// The colour manager, or `nil` when none is linked or installed.
    public static var current: (any ImageColorManaging)? {
        _ = ImageCodecs.linked   // runs the products' records, NukeColor's among them
        return installed.withLock { $0 }
    }

    /// Makes `manager` the program's colour manager, replacing any other.
    public static func install(_ manager: any ImageColorManaging) {
        installed.withLock { $0 = manager }
    }

    /// Offers `manager` from a product's record: taken when none is installed yet, so an app's
    /// own ``install(_:)`` wins.
    public static func announce(_ manager: any ImageColorManaging) {
        installed.withLock { if $0 == nil { $0 = manager } }
    }

    private static let installed = Mutex<(any ImageColorManaging)?>(nil)
}

/// An ISO/IEC 23091-2 colour description (`nclx`, as AVIF and HEIF carry it instead of an ICC
/// profile): code points for the primaries, the transfer characteristics and the matrix.
public struct NCLXColor: Sendable, Hashable, CustomStringConvertible {
    /// Colour primaries: 1 BT.709/sRGB, 9 BT.2020, 12 P3 (D65), 11 DCI-P3, 2 unspecified.
    public var primaries: Int
    /// Transfer characteristics: 13 sRGB, 1/6/14/15 BT.709's, 8 linear, 16 PQ, 18 HLG, 2 unspecified.
    public var transfer: Int
    /// Matrix coefficients (the decoder has already applied them).
    public var matrix: Int
    /// Full-range samples.
    public var fullRange: Bool

    /// Creates a description from its code points.
    public init(primaries: Int, transfer: Int, matrix: Int, fullRange: Bool) {
        self.primaries = primaries
        self.transfer = transfer
        self.matrix = matrix
        self.fullRange = fullRange
    }

    /// Reads ``ImageContainer/UserInfoKey/nclxKey``'s `[primaries, transfer, matrix, fullRange]`.
    public init?(userInfo: [ImageContainer.UserInfoKey: any Sendable]) {
        guard let values = userInfo[.nclxKey] as? [Int], values.count == 4 else { return nil }
        self.init(primaries: values[0], transfer: values[1], matrix: values[2], fullRange: values[3] != 0)
    }

    public var description: String { "nclx(primaries \(primaries), transfer \(transfer), matrix \(matrix)\(fullRange ? ", full range" : ""))" }
}

extension ImageContainer.UserInfoKey {
    /// An `nclx` colour description, `[primaries, transfer, matrix, fullRange]` as `[Int]`
    /// (AVIF and HEIF without an ICC profile): ``NCLXColor/init(userInfo:)`` reads it.
    public static let nclxKey: Self = "nukecodecs/heif-nclx"
    /// What ``ImageDecodingContext/colorConversion`` did, as a `String`: "Display P3 → sRGB",
    /// or why the pixels were left as they are ("not converted: ...").
    public static let colorConversionKey: Self = "nukecodecs/color-conversion"
}
