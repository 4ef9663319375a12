import NukeCore
import NukePluginKit

/// ICO and CUR are read and written in Swift here (no C library): the codec their errors name.
enum ICOLibrary: CodecLibrary {
    static let name = "NukeICO"
    static let version = ""
    static let format = ImageType.ico
}

extension ImageContainer.UserInfoKey {
    /// How many images an ICO or CUR file holds (its directory's entries). An `Int`.
    public static let icoEntryCountKey: ImageContainer.UserInfoKey = "nukecodecs/ico-entry-count"
    /// Which entry was decoded, counted from 0. An `Int`.
    public static let icoEntryIndexKey: ImageContainer.UserInfoKey = "nukecodecs/ico-entry-index"
    /// The size of every entry, in directory order, as their headers say (`[ImageSize]`).
    public static let icoEntrySizesKey: ImageContainer.UserInfoKey = "nukecodecs/ico-entry-sizes"
    /// A cursor's hotspot (CUR only), in the decoded entry's pixels before any resizing. A ``CursorHotspot``.
    public static let cursorHotspotKey: ImageContainer.UserInfoKey = "nukecodecs/cursor-hotspot"
}
