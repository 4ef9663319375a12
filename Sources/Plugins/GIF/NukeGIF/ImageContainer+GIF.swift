import NukeCore

extension ImageContainer.UserInfoKey {
    /// What giflib tolerated in a decoded GIF, as a `String`: how many of the frames decoded so
    /// far (the first, plus any a progressive decode previewed) had damaged or short LZW data,
    /// shown as far as it went as browsers do, and giflib's first message. Absent when there was
    /// nothing to report. Frames decoded later through ``NukeCore/ImageAnimation`` are not counted.
    public static let gifWarningsKey: ImageContainer.UserInfoKey = "nukecodecs/warnings"
}
