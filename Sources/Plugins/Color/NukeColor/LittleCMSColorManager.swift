#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import CColorShim
import NukeCore
import NukePluginKit

/// Colour management with Little CMS 2: converts decoded pixels to sRGB or to a profile the
/// caller gives (`ImageDecodingContext.colorConversion`).
///
/// The source colour is, in order:
/// - the image's ICC profile, when its colour space is the pixels' (RGB over colour, gray over
///   gray);
/// - its `nclx` description (AVIF, HEIF): BT.709/sRGB, BT.2020, Display P3 and DCI-P3
///   primaries with the sRGB, BT.709/BT.2020, linear or gamma 2.2/2.8 transfer. PQ and HLG are
///   HDR transfers that need tone mapping: those pixels are left as they are, and the reason is
///   given in `ImageContainer.UserInfoKey.colorConversionKey`, rather than mangled;
/// - sRGB, for an image that says nothing.
///
/// CMYK JPEGs are converted as they decode (``cmykConverter(profile:inverted:to:pixelCount:)``), through
/// their own profile or, without one, ``defaultCMYKProfilePath``: Ghostscript's
/// `default_cmyk.icc`, from Debian's `libgs-common` package. Where that file is absent, a
/// profile-less CMYK JPEG keeps the JPEG decoder's naive conversion (`R = C·K/255`, as djpeg's),
/// and the key says so.
///
/// Conversions use lcms2's perceptual intent (as its `jpgicc` and `tificc` default), without
/// black point compensation, and copy alpha through. Gray pixels stay gray, converted to a gray
/// with sRGB's tone curve, unless the target is a profile of the caller's (RGB).
public struct LittleCMSColorManager: ImageColorManaging {
    /// Ghostscript's standard CMYK profile in Debian's `libgs-common`.
    public static let ghostscriptCMYKProfilePath = "/usr/share/color/icc/ghostscript/default_cmyk.icc"

    /// The CMYK profile for CMYK JPEGs that carry none; `nil` for none.
    public var defaultCMYKProfilePath: String?

    /// A manager that uses `defaultCMYKProfilePath` for CMYK files without a profile.
    public init(defaultCMYKProfilePath: String? = Self.ghostscriptCMYKProfilePath) {
        self.defaultCMYKProfilePath = defaultCMYKProfilePath
    }

    static let codec = "NukeColor (lcms2 \(nukecolor_library_version() / 1000).\(nukecolor_library_version() / 10 % 100))"

    public func convert(_ container: inout ImageContainer, to target: ImageColorTarget) throws(ImageCodecError) {
        let format = container.image.bitmap.pixelFormat
        let gray = format.isGray
        do {
            // The common case, a camera's RGB (or gray) profile to sRGB: the shim's cached transform.
            if target == .sRGB, let icc = container.image.iccProfile, let header = ICCProfileHeader(icc),
               header.colorSpace == (gray ? .gray : .rgb) {
                let transform = try ColorTransform(toSRGBFrom: icc, format.colorLayout, format.colorLayout)
                try transform.apply(to: &container.image, output: format)
                container.image.colorInfo = ColorInfo()
                container.userInfo[.colorConversionKey] = "the embedded \(icc.count)-byte ICC profile → sRGB"
                return
            }
            guard let source = try sourceProfile(&container, gray: gray, target: target) else { return }
            let destination = try targetProfile(target, gray: gray)
            // Gray pixels into a caller's RGB profile become RGB.
            let output = gray && destination.space == NUKECOLOR_SPACE_RGB
                ? PixelFormat(channels: format.hasAlpha ? .rgba : .rgb, bitsPerChannel: format.bitsPerChannel) : format
            let transform = try ColorTransform(from: source, format.colorLayout, to: destination, output.colorLayout)
            try transform.apply(to: &container.image, output: output)
            container.image.colorInfo = ColorInfo(iccProfile: target.iccProfile)
            container.userInfo[.nclxKey] = nil
            container.userInfo[.colorConversionKey] = "\(source.name) → \(destination.name)"
        } catch let failure as ColorFailure {
            throw ImageCodecError(.unsupported, stage: .decoding, format: container.type, codec: Self.codec, message: failure.message)
        } catch let error as ImageCodecError {
            throw error
        } catch {
            throw ImageCodecError(.internalFailure, stage: .decoding, format: container.type, codec: Self.codec, message: "\(error)")
        }
    }

    /// The colour the pixels are in; `nil` when there is nothing to do (already the target) or
    /// nothing faithful to do (the reason noted in the container).
    private func sourceProfile(_ container: inout ImageContainer, gray: Bool, target: ImageColorTarget) throws(ColorFailure) -> ColorProfile? {
        if let icc = container.image.iccProfile, !icc.isEmpty {
            let profile = try ColorProfile.open(icc)
            let expected = gray ? NUKECOLOR_SPACE_GRAY : NUKECOLOR_SPACE_RGB
            guard profile.space == expected else {
                container.userInfo[.colorConversionKey] = "not converted: \(profile.name) is a \(Self.spaceName(profile.space)) profile over \(gray ? "gray" : "RGB") pixels"
                return nil
            }
            return profile
        }
        if let nclx = NCLXColor(userInfo: container.userInfo) {
            switch Self.profile(for: nclx, gray: gray) {
            case .success(nil):
                if target == .sRGB {
                    container.userInfo[.colorConversionKey] = "sRGB (\(nclx)) → sRGB"
                    return nil
                }
                return try ColorProfile.sRGB(gray: gray)
            case .success(let profile?):
                return profile
            case .failure(let failure):
                container.userInfo[.colorConversionKey] = "not converted: \(failure.message)"
                return nil
            }
        }
        // Untagged: sRGB, as browsers take it.
        if target == .sRGB {
            container.userInfo[.colorConversionKey] = "untagged, taken as sRGB"
            return nil
        }
        return try ColorProfile.sRGB(gray: gray)
    }

    private func targetProfile(_ target: ImageColorTarget, gray: Bool) throws(ColorFailure) -> ColorProfile {
        switch target {
        case .sRGB:
            return try ColorProfile.sRGB(gray: gray)
        case .profile(let data):
            let profile = try ColorProfile.open(data)
            guard profile.space == NUKECOLOR_SPACE_RGB || (gray && profile.space == NUKECOLOR_SPACE_GRAY) else {
                throw ColorFailure("the target \(profile.name) is a \(Self.spaceName(profile.space)) profile: convert to RGB (or gray for gray pixels)")
            }
            return profile
        }
    }

    /// The profile an `nclx` description stands for: `nil` for sRGB itself.
    static func profile(for nclx: NCLXColor, gray: Bool) -> Result<ColorProfile?, ColorFailure> {
        let d65 = [0.3127, 0.3290]
        let primaries: (xy: [Double], name: String)
        switch nclx.primaries {
        case 1, 2: primaries = (d65 + [0.640, 0.330, 0.300, 0.600, 0.150, 0.060], "BT.709")
        case 9: primaries = (d65 + [0.708, 0.292, 0.170, 0.797, 0.131, 0.046], "BT.2020")
        case 12: primaries = (d65 + [0.680, 0.320, 0.265, 0.690, 0.150, 0.060], "Display P3")
        case 11: primaries = ([0.314, 0.351] + [0.680, 0.320, 0.265, 0.690, 0.150, 0.060], "DCI-P3")
        default: return .failure(ColorFailure("nclx colour primaries \(nclx.primaries) are not supported"))
        }
        let transfer: (code: Int32, gamma: Double, name: String)
        switch nclx.transfer {
        case 13, 2: transfer = (1, 1, "sRGB transfer")
        case 1, 6, 14, 15: transfer = (2, 1, "BT.709 transfer")
        case 8: transfer = (3, 1, "linear")
        case 4: transfer = (4, 2.2, "gamma 2.2")
        case 5: transfer = (4, 2.8, "gamma 2.8")
        case 16: return .failure(ColorFailure("PQ (SMPTE ST 2084, nclx transfer 16) is an HDR transfer that needs tone mapping"))
        case 18: return .failure(ColorFailure("HLG (ARIB STD-B67, nclx transfer 18) is an HDR transfer that needs tone mapping"))
        default: return .failure(ColorFailure("nclx transfer characteristics \(nclx.transfer) are not supported"))
        }
        if primaries.name == "BT.709", transfer.code == 1 { return .success(nil) }
        if gray { return .failure(ColorFailure("gray pixels with nclx \(primaries.name) primaries")) }
        do {
            return .success(try ColorProfile.rgb(primaries.xy, transfer: transfer.code, gamma: transfer.gamma,
                                                 name: "\(primaries.name), \(transfer.name) (nclx)"))
        } catch {
            return .failure(error)
        }
    }

    /// Up to this many pixels (a thumbnail's DCT-reduced CMYK JPEG), lcms2's exact pipeline:
    /// transicc's result to the level, for less than the 90 ms its high-resolution lookup table
    /// takes to make. Larger images use the table (within 2 levels for ~99% of samples).
    public static let exactCMYKPixelLimit = 350_000

    public func cmykConverter(profile: Data?, inverted: Bool, to target: ImageColorTarget, pixelCount: Int) throws(ImageCodecError) -> CMYKRowConverter? {
        do throws(ColorFailure) {
            let source: ColorProfile
            if let profile, !profile.isEmpty, let opened = try? ColorProfile.open(profile), opened.space == NUKECOLOR_SPACE_CMYK {
                source = opened
            } else if let path = defaultCMYKProfilePath, let data = Self.defaultProfile(at: path) {
                source = try ColorProfile.open(data, name: "\(URL(fileURLWithPath: path).lastPathComponent) (no CMYK profile in the file)")
            } else {
                return nil
            }
            let destination = try targetProfile(target, gray: false)
            let transform = try ColorTransform(from: source, inverted ? NUKECOLOR_CMYK8_INVERTED : NUKECOLOR_CMYK8, to: destination, NUKECOLOR_RGB8,
                                               exact: pixelCount <= Self.exactCMYKPixelLimit)
            return CMYKRowConverter(function: nukecolor_transform_row, context: UnsafeMutableRawPointer(transform.handle), owner: transform,
                                    summary: "\(source.name) → \(destination.name)")
        } catch {
            throw ImageCodecError(.unsupported, stage: .decoding, format: .jpeg, codec: Self.codec, message: error.message)
        }
    }

    /// The standard CMYK profile at `path`, read once per process: a sandboxed helper reads it
    /// while warming up, before its sandbox forbids opening files, and converts with it after.
    static func defaultProfile(at path: String) -> Data? {
        if let cached = defaultProfiles.withLock({ $0[path] }) { return Data(cached) }
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        defaultProfiles.withLock { $0[path] = Array(data) }
        return data
    }

    /// Kept as arrays, not `Data`: `Data` keeps its storage behind a tagged pointer, which
    /// LeakSanitizer cannot follow from a global (the fuzz targets' leak check reported the cache).
    private static let defaultProfiles = Mutex<[String: [UInt8]]>([:])

    static func spaceName(_ space: nukecolor_space) -> String {
        switch space {
        case NUKECOLOR_SPACE_RGB: "RGB"
        case NUKECOLOR_SPACE_GRAY: "gray"
        case NUKECOLOR_SPACE_CMYK: "CMYK"
        default: "non-RGB"
        }
    }
}

extension ImageColorTarget {
    /// The profile the result carries: none for sRGB.
    var iccProfile: Data? {
        if case .profile(let data) = self { return data }
        return nil
    }
}

/// Announces ``LittleCMSColorManager`` as the program's colour manager from the `nuke_codecs`
/// section, so that linking NukeColor is all an app does.
@section("nuke_codecs") @used
let nukeColorRecord: ImageCodecs.Record = { ImageColorManagement.announce(LittleCMSColorManager()) }
