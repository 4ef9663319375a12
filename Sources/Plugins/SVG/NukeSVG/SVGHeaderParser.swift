#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// Reads an SVG document's intrinsic size from its root element, as ``SVGDocument`` sizes it
/// once librsvg has parsed the whole document: `width` and `height` when both are absolute
/// lengths (CSS units at 96 DPI; a percentage or a missing one counts as none), else the
/// `viewBox`'s size, else 300 × 150. SVGZ is read from the start of its decompressed bytes.
///
/// What it cannot tell without a style sheet or the whole document — `em` and `ex` units,
/// entity references in the values, a root tag longer than 64 KiB — is `.unavailable`: the
/// decoder then checks the render size itself, as it always does.
enum SVGHeaderParser {
    /// How much of the document (or of SVGZ's decompressed bytes) the root tag may take.
    static let window = 65_536

    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        let markup: Data
        if let inflated = SVGPlugin.gunzippedPrefix(data, count: window) {
            markup = inflated
        } else {
            markup = data.prefix(window)
        }
        let root = markup.withUnsafeBytes { raw -> Root in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let start = SVGPlugin.rootElementEnd(bytes) else { return .incomplete }
            return rootAttributes(bytes, from: start)
        }
        switch root {
        case .incomplete:
            // Not an SVG root (yet): the root tag or the document's first bytes are still to come.
            return markup.count < window ? .needsMoreData : .unavailable
        case .malformed:
            return .unavailable
        case .attributes(let attributes):
            guard let size = intrinsicSize(attributes) else { return .unavailable }
            var header = ImageHeader(type: .svg, width: size.width, height: size.height, bitDepth: 8, componentCount: 4, hasAlpha: true)
            header.isScalable = true
            return .parsed(header)
        }
    }

    private enum Root {
        case incomplete, malformed
        case attributes([String: String])
    }

    /// The root element's attributes, from just after its name to its `>`.
    private static func rootAttributes(_ b: UnsafeBufferPointer<UInt8>, from start: Int) -> Root {
        var attributes: [String: String] = [:]
        var i = start
        func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
        while true {
            while i < b.count, isSpace(b[i]) { i += 1 }
            guard i < b.count else { return .incomplete }
            if b[i] == UInt8(ascii: ">") || b[i] == UInt8(ascii: "/") { return .attributes(attributes) }
            let nameStart = i
            while i < b.count, !isSpace(b[i]), b[i] != UInt8(ascii: "="), b[i] != UInt8(ascii: ">") { i += 1 }
            let name = String(decoding: UnsafeBufferPointer(rebasing: b[nameStart..<i]), as: UTF8.self)
            while i < b.count, isSpace(b[i]) { i += 1 }
            guard i < b.count else { return .incomplete }
            guard b[i] == UInt8(ascii: "=") else { return .malformed }
            i += 1
            while i < b.count, isSpace(b[i]) { i += 1 }
            guard i < b.count else { return .incomplete }
            let quote = b[i]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return .malformed }
            i += 1
            let valueStart = i
            while i < b.count, b[i] != quote { i += 1 }
            guard i < b.count else { return .incomplete }
            attributes[name] = String(decoding: UnsafeBufferPointer(rebasing: b[valueStart..<i]), as: UTF8.self)
            i += 1
        }
    }

    /// The size ``SVGDocument`` gives the document, rounded up to whole pixels; `nil` when a value
    /// needs what only a full parse knows.
    static func intrinsicSize(_ attributes: [String: String]) -> ImageSize? {
        guard !attributes.values.contains(where: { $0.contains("&") }) else { return nil }
        var width: Double?, height: Double?
        if let text = attributes["width"] {
            guard case .some(let length) = length(text) else { return nil }
            width = length
        }
        if let text = attributes["height"] {
            guard case .some(let length) = length(text) else { return nil }
            height = length
        }
        let (w, h): (Double, Double)
        if let width, let height, width > 0, height > 0 {
            (w, h) = (width, height)
        } else if let box = viewBox(attributes["viewBox"]), box.width > 0, box.height > 0 {
            (w, h) = box
        } else {
            (w, h) = (300, 150)
        }
        guard w.isFinite, h.isFinite else { return nil }
        return ImageSize.rendered(width: w, height: h, for: nil, contentMode: .aspectFit)
    }

    /// A CSS length in pixels at 96 DPI: `.some(nil)` for a percentage (no intrinsic length),
    /// `nil` for what cannot be told here (`em`, `ex`, anything unparsed).
    private static func length(_ text: String) -> Double?? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let number = trimmed.prefix { $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" || $0 == "e" || $0 == "E" }
        // An exponent's `e` is taken with the number only when digits follow: `1em` is 1 em.
        var digits = number
        while let last = digits.last, last == "e" || last == "E" || last == "-" || last == "+" { digits.removeLast() }
        guard let value = Double(digits) else { return nil }
        let perUnit: [String: Double] = ["": 1, "px": 1, "in": 96, "cm": 96 / 2.54, "mm": 96 / 25.4, "pt": 96.0 / 72, "pc": 16]
        let unit = trimmed.dropFirst(digits.count).lowercased()
        if unit == "%" { return .some(nil) }
        guard let scale = perUnit[unit] else { return nil }
        return .some(value * scale)
    }

    /// The `viewBox`'s width and height: four numbers separated by spaces or commas.
    private static func viewBox(_ text: String?) -> (width: Double, height: Double)? {
        guard let text else { return nil }
        let numbers = text.split { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" || $0 == "\r" }.compactMap { Double($0) }
        guard numbers.count == 4 else { return nil }
        return (numbers[2], numbers[3])
    }
}
