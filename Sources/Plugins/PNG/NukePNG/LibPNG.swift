internal import CPNGShim

/// Facts about the libpng this module is linked with.
enum LibPNG {
    /// libpng's version as it reports it at run time, such as `"1.6.39"`.
    ///
    /// The corresponding libpng function is `png_get_libpng_ver`.
    static let version: String = String(cString: nukepng_version())

    /// The codec name errors carry, such as `"libpng 1.6.39"`.
    static let codecName = "libpng \(version)"
}
