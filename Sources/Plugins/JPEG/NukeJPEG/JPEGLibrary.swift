internal import CJPEGShim

/// Facts about the linked libjpeg-turbo.
enum JPEGLibrary {
    /// The version from `LIBJPEG_TURBO_VERSION` in jconfig.h, such as `"2.1.5"`.
    static let version = String(cString: nukejpeg_library_version())

    /// `"libjpeg-turbo 2.1.5"`, for errors.
    static let codec = "libjpeg-turbo \(version)"
}
