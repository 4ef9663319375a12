#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CSVGShim
import NukeCore
import NukePluginKit

/// NukeSVG's decoder plugin: SVG and SVGZ documents, rendered whole by librsvg.
public enum SVGPlugin: WholeFileDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { SVGLibrary.codecName }

    /// `ImageDecodingContext.userInfo[dpiKey]`: the resolution (`Double`) for physical units
    /// (`in`, `cm`, `mm`, `pt`, `pc`). Default 96, as CSS.
    public static let dpiKey = "nukecodecs/svg-dpi"

    /// Whether the data is an SVG document, or one gzipped (SVGZ).
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        isSVG(data)
    }

    /// Renders the complete document: librsvg needs all of it.
    public static func decode(_ bytes: Data, context: ImageDecodingContext) throws(ImageCodecError) -> ImageContainer {
        try SVGDecoding(context: context).decode(bytes)
    }

    /// Reads the intrinsic size from the root element's `width`, `height` and `viewBox`, as the
    /// decoder sizes the document: a scalable header, so the core holds the
    /// render size to the limits before any decoder sees the document.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        SVGHeaderParser.parse(data)
    }

    /// `true` for SVG and gzip-compressed SVG: the sniffer's test for ``NukeCore/ImageType/svg``.
    static func isSVG(_ data: Data) -> Bool {
        isSVGDocument(data) || isSVGZ(data)
    }

    /// Returns `true` when `data` is XML whose root element is `svg` (with or without a prefix).
    static func isSVGDocument(_ data: Data) -> Bool {
        data.prefix(65_536).withUnsafeBytes { raw in rootElementEnd(raw.bindMemory(to: UInt8.self)) != nil }
    }

    /// Where the name of the root element ends when it is `svg` (with or without a prefix): its
    /// attributes follow. `nil` when the root is not `svg` or `b` ends before its name does.
    ///
    /// Skips a UTF-8 byte-order mark, white space, the XML declaration, processing
    /// instructions, comments and a DOCTYPE (with an internal subset).
    static func rootElementEnd(_ b: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        if b.count >= 3, b[0] == 0xEF, b[1] == 0xBB, b[2] == 0xBF { i = 3 }
        func skipSpace() { while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 } }
        func starts(_ s: String) -> Bool {
            let u = Array(s.utf8)
            guard i + u.count <= b.count else { return false }
            for k in 0..<u.count where b[i + k] != u[k] { return false }
            return true
        }
        func skip(past terminator: String) -> Bool {
            while i < b.count {
                if starts(terminator) { i += terminator.utf8.count; return true }
                i += 1
            }
            return false
        }
        while true {
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: "<") else { return nil }
            if starts("<?") {
                guard skip(past: "?>") else { return nil }
            } else if starts("<!--") {
                guard skip(past: "-->") else { return nil }
            } else if starts("<!DOCTYPE") || starts("<!doctype") {
                // Skip to the closing '>', honouring an internal subset in brackets.
                var depth = 0
                while i < b.count {
                    let c = b[i]
                    i += 1
                    if c == UInt8(ascii: "[") { depth += 1 }
                    else if c == UInt8(ascii: "]") { depth -= 1 }
                    else if c == UInt8(ascii: ">"), depth <= 0 { break }
                }
                if i >= b.count { return nil }
            } else {
                // The root element: read its (possibly prefixed) name.
                i += 1
                var name: [UInt8] = []
                while i < b.count, name.count < 64 {
                    let c = b[i]
                    if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == UInt8(ascii: ">") || c == UInt8(ascii: "/") { break }
                    name.append(c)
                    i += 1
                }
                let local = name.split(separator: UInt8(ascii: ":")).last.map(Array.init) ?? []
                return local == Array("svg".utf8) && i < b.count ? i : nil
            }
        }
    }

    /// `true` when `data` is gzip whose first decompressed bytes are an SVG document.
    static func isSVGZ(_ data: Data) -> Bool {
        gunzippedPrefix(data).map(isSVGDocument) ?? false
    }

    /// The first (up to) `count` bytes `data` decompresses to, when it is gzip; `nil` otherwise.
    static func gunzippedPrefix(_ data: Data, count: Int = 4096) -> Data? {
        guard data.count >= 10, data[data.startIndex] == 0x1F, data[data.startIndex + 1] == 0x8B else { return nil }
        var prefix = [UInt8](repeating: 0, count: count)
        let made = data.withUnsafeBytes { raw in
            prefix.withUnsafeMutableBufferPointer { out in
                nukesvg_gunzip_prefix(raw.bindMemory(to: UInt8.self).baseAddress!, raw.count, out.baseAddress!, out.count)
            }
        }
        return made > 0 ? Data(prefix.prefix(made)) : nil
    }

    static func dpi(from context: ImageDecodingContext) -> Double {
        (context.userInfo[dpiKey] as? Double).map { $0 > 0 ? $0 : 96 } ?? 96
    }
}

extension ImageDecoders {
    /// Renders SVG and SVGZ with librsvg and cairo, at the size the caller asks for.
    ///
    /// Add the product to an app's `Package.swift`; linking it registers the decoder:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukeSVG", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Size: the document's `width` and `height` (physical units at `dpiKey`, 96 by default),
    /// else its viewBox, else 300 × 150 as browsers do, rounded up to whole pixels. With a
    /// `ImageDecodingContext.targetSize` the document is rendered at the size that fits
    /// (`.aspectFit`) or fills (`.aspectFill`) the target, keeping its aspect ratio, larger than
    /// its intrinsic size too: it is drawn at that size, never scaled afterwards. The render size
    /// is checked against the limits before the cairo surface exists.
    ///
    /// Output: `.rgba8`, straight alpha, on a transparent background (cairo's premultiplied ARGB
    /// converted with rounding). `userInfo[.svgIntrinsicSizeKey]` and `[.svgViewBoxKey]` describe
    /// the document (`nuke info` prints them).
    ///
    /// No file or network access: the document is parsed without a base URL, so `href`s to other
    /// files, `file://` and `http(s)://` URLs and CSS `@import`s do not load (librsvg's own policy;
    /// `data:` URLs do). librsvg's limits on elements and references stay on. librsvg 2.54 can
    /// crash, abort or stall on hostile documents: decode untrusted SVG through NukeIsolation,
    /// which isolates SVG by default. Text uses the system's fonts through fontconfig.
    ///
    /// The corresponding librsvg functions are `rsvg_handle_new_from_data` and
    /// `rsvg_handle_render_document`.
    public typealias SVG = PluginImageDecoder<SVGPlugin>
}

extension PluginImageDecoder where Plugin == SVGPlugin {
    /// ``SVGPlugin/dpiKey``: the key of `ImageDecodingContext.userInfo` with the DPI
    /// (a `Double`) that converts physical units.
    public static var dpiKey: String { SVGPlugin.dpiKey }
}

extension ImageCodec {
    /// SVG and SVGZ through librsvg: rendered at the intrinsic size, or straight at the target
    /// size. Registering it also registers the SVG format with `ImageType`'s sniffer
    /// (XML whose root element is `svg`; SVGZ by inflating its first bytes).
    public static let svg: ImageCodec = {
        ImageType.register(.svg, name: "SVG", filenameExtensions: ["svg", "svgz"]) { SVGPlugin.isSVG($0) }
        return svgCodec
    }()

    private static let svgCodec: ImageCodec = {
        var codec = ImageCodec(
            info: ImageCodecInfo(
                name: "NukeSVG", type: .svg, capabilities: [.decode, .scaledDecode],
                library: SVGLibrary.name, libraryVersion: SVGLibrary.version
            ),
            plugin: SVGPlugin.self
        )
        codec.decodingOptions = [
            ImageDecodingOption(name: "dpi", key: SVGPlugin.dpiKey,
                                summary: "the resolution of physical units (in, cm, mm, pt, pc), a positive number (default 96)") { text in
                Double(text).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
            },
        ]
        codec.cpuTimeLimitKey = .svgRenderMilliseconds
        codec.describe = { userInfo in
            guard let size = userInfo[.svgIntrinsicSizeKey] as? ImageSize else { return nil }
            let viewBox = userInfo[.svgViewBoxKey] as? [Double]
            func number(_ value: Double) -> String { value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)" }
            let shown = viewBox.map { "viewBox " + $0.map(number).joined(separator: " ") }
            return ImageFormatDetails(name: "SVG", summary: "intrinsic size \(size), \(shown ?? "no viewBox")", fields: [
                ("intrinsicWidth", size.width), ("intrinsicHeight", size.height), ("viewBox", viewBox),
            ])
        }
        return codec
    }()
}

/// Announces ``NukeCore/ImageCodec/svg`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeSVGRecord: ImageCodecs.Record = { ImageCodecs.announce(.svg) }

extension ImageLimits.Key {
    /// Elements of an SVG document once its references (`use`, patterns, markers, masks, clip
    /// paths, filters) are expanded wherever they are used. Default 1,000,000; untrusted 100,000,
    /// under which a document's internal entities may not expand to markup either (librsvg bounds
    /// their expansion itself otherwise).
    public static let svgElements = ImageLimits.Key(name: "svg-elements", defaultValue: 1_000_000, untrustedValue: 100_000)
    /// Estimated work for drawing an SVG document, in operations of about a nanosecond: each
    /// filter primitive costs the render area times its weight (turbulence octaves, morphology and
    /// convolution kernels), per element it filters; checked before drawing. Default
    /// 20,000,000,000 (about 20 s); untrusted 2,000,000,000 (25 turbulence octaves over 1 MP).
    public static let svgWork = ImageLimits.Key(name: "svg-work", defaultValue: 20_000_000_000, untrustedValue: 2_000_000_000)
    /// CPU time, in milliseconds, for drawing an SVG document in an isolated helper (NukeIsolation
    /// ends the render beyond it with `.limitExceeded`); in process, ``svgWork`` bounds a render.
    /// Default none (`Int.max`: the helper pool's CPU limit); untrusted 2,000.
    public static let svgRenderMilliseconds = ImageLimits.Key(name: "svg-render-milliseconds", defaultValue: .max, untrustedValue: 2_000)
}
