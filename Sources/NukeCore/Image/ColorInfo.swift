#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Colour information a file carried, kept so that an encoder or a colour-managed consumer
/// can use it. NukeCore does not convert colours.
public struct ColorInfo: Sendable, Hashable {
    /// The embedded ICC profile, byte for byte.
    public var iccProfile: Data?
    /// The file's gamma (PNG `gAMA`), such as 0.45455.
    public var gamma: Double?
    /// The sRGB rendering intent (PNG `sRGB`): 0 perceptual … 3 absolute colorimetric.
    public var sRGBIntent: Int?

    /// Creates colour information; all of it is optional.
    public init(iccProfile: Data? = nil, gamma: Double? = nil, sRGBIntent: Int? = nil) {
        self.iccProfile = iccProfile
        self.gamma = gamma
        self.sRGBIntent = sRGBIntent
    }

    /// `true` when nothing is known.
    public var isEmpty: Bool { iccProfile == nil && gamma == nil && sRGBIntent == nil }
}
