#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CColorShim
import NukeCore

/// An lcms2 profile, closed when released.
final class ColorProfile {
    let handle: OpaquePointer
    /// What the profile is, for ``ImageContainer/UserInfoKey/colorConversionKey``.
    let name: String

    private init(_ handle: OpaquePointer, name: String?) {
        self.handle = handle
        var text = [CChar](repeating: 0, count: 128)
        nukecolor_profile_description(handle, &text, text.count)
        let description = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.name = name ?? (description.isEmpty ? "an ICC profile" : description)
    }

    deinit { nukecolor_profile_free(handle) }

    /// The data colour space.
    var space: nukecolor_space { nukecolor_profile_space(handle) }

    /// Opens an ICC profile.
    static func open(_ data: Data, name: String? = nil) throws(ColorFailure) -> ColorProfile {
        var diagnostics = nuke_diagnostics()
        let handle = data.withUnsafeBytes { bytes in
            bytes.baseAddress.flatMap { nukecolor_profile_open($0.assumingMemoryBound(to: UInt8.self), bytes.count, &diagnostics) }
        }
        guard let handle else { throw ColorFailure("the ICC profile could not be read: \(diagnostics.messageText)") }
        return ColorProfile(handle, name: name)
    }

    /// sRGB, colour or gray.
    static func sRGB(gray: Bool) throws(ColorFailure) -> ColorProfile {
        var diagnostics = nuke_diagnostics()
        guard let handle = gray ? nukecolor_profile_srgb_gray(&diagnostics) : nukecolor_profile_srgb(&diagnostics) else {
            throw ColorFailure(diagnostics.messageText)
        }
        return ColorProfile(handle, name: gray ? "sRGB gray" : "sRGB")
    }

    /// An RGB profile from chromaticities (white, red, green, blue) and a transfer function
    /// (1 sRGB, 2 BT.709, 3 linear, 4 gamma).
    static func rgb(_ xy: [Double], transfer: Int32, gamma: Double = 1, name: String) throws(ColorFailure) -> ColorProfile {
        var diagnostics = nuke_diagnostics()
        guard let handle = xy.withUnsafeBufferPointer({ nukecolor_profile_rgb($0.baseAddress!, transfer, gamma, &diagnostics) }) else {
            throw ColorFailure(diagnostics.messageText)
        }
        return ColorProfile(handle, name: name)
    }

    /// The profile as ICC bytes.
    func data() throws(ColorFailure) -> Data {
        var diagnostics = nuke_diagnostics()
        var count = 0
        guard let bytes = nukecolor_profile_save(handle, &count, &diagnostics) else { throw ColorFailure(diagnostics.messageText) }
        defer { nukecolor_buffer_free(bytes) }
        return Data(bytes: bytes, count: count)
    }
}

/// An lcms2 transform between two pixel layouts, freed when released.
final class ColorTransform {
    let handle: OpaquePointer
    /// `false` for a transform the shim's process-wide cache keeps.
    private let owned: Bool

    init(from source: ColorProfile, _ input: nukecolor_layout, to target: ColorProfile, _ output: nukecolor_layout,
         exact: Bool = false) throws(ColorFailure) {
        var diagnostics = nuke_diagnostics()
        guard let handle = nukecolor_transform_create(source.handle, input, target.handle, output, exact ? 1 : 0, &diagnostics) else {
            throw ColorFailure("no transform from \(source.name) to \(target.name): \(diagnostics.messageText)")
        }
        self.handle = handle
        owned = true
    }

    /// The shim's transform from `icc` to sRGB, made once per process for each profile and layout.
    init(toSRGBFrom icc: Data, _ input: nukecolor_layout, _ output: nukecolor_layout) throws(ColorFailure) {
        var diagnostics = nuke_diagnostics()
        var owned: Int32 = 0
        let made = icc.withUnsafeBytes { bytes in
            nukecolor_transform_to_srgb(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, input, output, &owned, &diagnostics)
        }
        guard let made else { throw ColorFailure("no transform from the embedded ICC profile to sRGB: \(diagnostics.messageText)") }
        handle = made
        self.owned = owned != 0
    }

    deinit { if owned { nukecolor_transform_free(handle) } }

    /// Converts every frame of `image` (un-premultiplied first) to pixels of `output`: in place
    /// when the layout stays the same and the frame's pixels are its own (lcms2 allows it), into a
    /// new bitmap otherwise.
    func apply(to image: inout Image, output: PixelFormat) throws(ImageCodecError) {
        for index in image.frames.indices {
            // Taken out of the frame, so that an unshared bitmap is written in place.
            var bitmap = image.frames[index].bitmap
            image.frames[index].bitmap = .empty
            bitmap = bitmap.unpremultiplied()
            if output == bitmap.pixelFormat {
                let stride = bitmap.bytesPerRow, width = UInt32(bitmap.width), height = UInt32(bitmap.height)
                bitmap.withUnsafeMutableBytes { pixels in
                    guard let base = pixels.baseAddress else { return }
                    nukecolor_transform_rows(handle, base, stride, base, stride, width, height)
                }
            } else {
                bitmap = try apply(bitmap, to: output)
            }
            image.frames[index].bitmap = bitmap
        }
    }

    /// Converts `source` into a new bitmap of `format`, row by row.
    func apply(_ source: Bitmap, to format: PixelFormat) throws(ImageCodecError) -> Bitmap {
        try PixelAllocator.heap.makeBitmap(width: source.width, height: source.height, pixelFormat: format,
                                           alphaMode: format.hasAlpha ? AlphaMode.straight : AlphaMode.none) { output in
            source.withUnsafeBytes { input in
                guard let from = input.baseAddress, let to = output.baseAddress else { return }
                nukecolor_transform_rows(handle, from, source.bytesPerRow, to, source.width * format.bytesPerPixel,
                                         UInt32(source.width), UInt32(source.height))
            }
        }
    }
}

/// Why a conversion could not be made; the manager turns it into an error or a note.
struct ColorFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

extension PixelFormat {
    /// The lcms2 layout of pixels in this format.
    var colorLayout: nukecolor_layout {
        switch (channels, bitsPerChannel) {
        case (.gray, 8): NUKECOLOR_GRAY8
        case (.grayAlpha, 8): NUKECOLOR_GRAYA8
        case (.rgb, 8): NUKECOLOR_RGB8
        case (.rgba, 8): NUKECOLOR_RGBA8
        case (.gray, _): NUKECOLOR_GRAY16
        case (.grayAlpha, _): NUKECOLOR_GRAYA16
        case (.rgb, _): NUKECOLOR_RGB16
        default: NUKECOLOR_RGBA16
        }
    }
}
