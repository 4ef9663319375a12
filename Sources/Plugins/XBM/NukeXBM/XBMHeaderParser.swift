#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// The XBM header hook, and the header the decoder reads: the `#define`s of width, height and
/// the optional hotspot, then the array's declaration up to its `{` (`char` values for X11,
/// `short` ones for X10).
enum XBMHeaderParser {
    struct Header {
        var width: Int
        var height: Int
        var hotspot: (x: Int, y: Int)?
        /// `true` for 16-bit values (X10).
        var isX10: Bool
        /// Where the values start (just after `{`).
        var valuesOffset: Int
    }

    /// The most the header (defines, comments, the declaration) may take.
    static let maxHeaderLength = 64 * 1024

    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        read(data).parseResult { header in
            ImageHeader(type: .xbm, width: header.width, height: header.height, bitDepth: 1, componentCount: 1, hasAlpha: false, frameCount: 1)
        }
    }

    static func read(_ data: Data) -> HeaderRead<Header> {
        let prefix = data.prefix(maxHeaderLength)
        // The array's `{`, outside comments.
        var brace: Data.Index?
        var i = prefix.startIndex
        while i < prefix.endIndex {
            if prefix[i] == UInt8(ascii: "/"), i + 1 < prefix.endIndex, prefix[i + 1] == UInt8(ascii: "*") {
                i += 2
                while i + 1 < prefix.endIndex, !(prefix[i] == UInt8(ascii: "*") && prefix[i + 1] == UInt8(ascii: "/")) { i += 1 }
                i += 2
                continue
            }
            if prefix[i] == UInt8(ascii: "{") {
                brace = i
                break
            }
            i += 1
        }
        guard let brace else {
            return data.count >= maxHeaderLength ? .corrupt("no bits array in the first \(maxHeaderLength) bytes") : .needsMoreData
        }
        let text = String(decoding: prefix[prefix.startIndex..<brace], as: Unicode.ASCII.self)
        // Comments out, then words.
        var cleaned = ""
        var rest = Substring(text)
        while let open = rest.range(of: "/*") {
            cleaned += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "*/") else { return .corrupt("a comment is not closed") }
            rest = rest[close.upperBound...]
        }
        cleaned += rest
        var width: Int?, height: Int?, xHot: Int?, yHot: Int?
        var declaration = ""
        for line in cleaned.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if words.first == "#define" {
                guard words.count >= 3, let value = Int(words[2]) else { return .corrupt("a #define without a number: \(line.prefix(80))") }
                let name = words[1]
                if name.hasSuffix("_width") || name == "width" { width = value }
                else if name.hasSuffix("_height") || name == "height" { height = value }
                else if name.hasSuffix("_x_hot") { xHot = value }
                else if name.hasSuffix("_y_hot") { yHot = value }
            } else {
                declaration += " " + line
            }
        }
        guard let width, let height else { return .corrupt("no #define of the width and the height") }
        guard width > 0, height > 0 else { return .corrupt("invalid image size \(width)×\(height)") }
        let words = declaration.split(whereSeparator: { " \t[]=;".contains($0) })
        guard words.contains(where: { $0.hasSuffix("_bits") || $0 == "bits" }) else { return .corrupt("no _bits array before the {") }
        let isX10 = words.contains("short")
        guard isX10 || words.contains("char") else { return .corrupt("the bits array is neither char nor short") }
        let hotspot = xHot.flatMap { x in yHot.map { (x, $0) } }
        return .header(Header(width: width, height: height, hotspot: hotspot, isX10: isX10, valuesOffset: brace - data.startIndex + 1))
    }
}
