#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit
import NukePixels

/// What drawing a document would cost, worked out from its markup before librsvg sees it, and
/// checked against the decode's ``NukeCore/ImageLimits``.
///
/// librsvg 2.54 has no limit on the work or memory of a render: a 208-byte filter of 33 billion
/// turbulence octaves runs for minutes, `use` elements that reference each other multiply into
/// billions of elements, and an embedded image is decoded by gdk-pixbuf at whatever size it
/// declares. The budget reads the document once (linear in its size) and estimates, per render
/// size:
/// - **elements** once every reference is expanded (`use`, and the patterns, markers, masks, clip
///   paths and filters that `url(#…)` names, each counted wherever it is used; a stylesheet that
///   names a `url(#…)` is assumed to apply it to every element): at most
///   `ImageLimits.Key.svgElements`;
/// - **work**: each filter primitive costs the render area times its weight, in operations of
///   about a nanosecond measured on librsvg 2.54 (turbulence 75 per octave, morphology and
///   convolution 8 per kernel tap, blur 150, lighting 70, the rest 10), per element it filters:
///   at most `ImageLimits.Key.svgWork`;
/// - **memory**: the surfaces alive at once on the deepest path (one per group that needs
///   compositing: opacity, masks, clip paths, filters; one per filter primitive), each the render
///   area: at most twice ``NukeCore/ImageLimits/maxDecodedBytes``;
/// - **embedded images** (`data:` URLs): PNG and JPEG within the limits by their headers, SVG by
///   this same budget; other formats are refused (gdk-pixbuf would decode them without limits).
///
/// Under limits as tight as ``NukeCore/ImageLimits/untrusted``'s, entity declarations whose text
/// holds markup are refused: the markup they expand to would be invisible to this scan. Under
/// looser limits they are drawn (the SVG 1.1 suite uses them), and libxml2 bounds their expansion.
struct SVGBudget {
    let limits: ImageLimits
    let renderArea: Double

    /// Checks `bytes` (the document, decompressed) for a render of `size`.
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` `.limitExceeded` naming what is over which limit, or
    ///   `.corrupt` for a reference cycle.
    static func check(_ bytes: Data, size: ImageSize, limits: ImageLimits) throws(ImageCodecError) {
        let budget = SVGBudget(limits: limits, renderArea: Double(max(1, size.width)) * Double(max(1, size.height)))
        let cost = try budget.evaluate(bytes, depth: 0)
        func over(_ what: String) -> ImageCodecError {
            SVGLibrary.error(.limitExceeded, .header, what)
        }
        if cost.elements > Double(limits[.svgElements]) {
            throw over("the document has \(describe(cost.elements)) elements once its references are expanded, more than the limit of \(limits[.svgElements])")
        }
        if cost.work > Double(limits[.svgWork]) {
            throw over("drawing the document would take about \(describe(cost.work)) operations of about a nanosecond (filters over the render area), more than the limit of \(limits[.svgWork])")
        }
        let surfaces = cost.layers + 2
        let bytes = surfaces * budget.renderArea * 4
        if bytes > 2 * Double(limits.maxDecodedBytes) {
            throw over("drawing the document would hold \(describe(surfaces)) surfaces of \(describe(budget.renderArea)) pixels at once (\(describe(bytes)) bytes), more than twice the limit of \(limits.maxDecodedBytes) decoded bytes")
        }
        if cost.embeddedPixels * 4 > Double(limits.maxDecodedBytes) {
            throw over("its embedded images hold \(describe(cost.embeddedPixels)) pixels wherever they are drawn, more than the limit of \(limits.maxDecodedBytes) decoded bytes")
        }
    }

    /// The cost of drawing a whole document (nested ones: `depth` > 0).
    fileprivate func evaluate(_ bytes: Data, depth: Int) throws(ImageCodecError) -> Cost {
        let document = try SVGMarkup.parse(bytes, refusingMarkupEntities: limits[.svgElements] <= ImageLimits.Key.svgElements.untrustedValue)
        var evaluation = Evaluation(document: document, budget: self, depth: depth)
        var total = Cost()
        // Every top-level element (one root in a well-formed document).
        for root in document.nodes.indices where document.nodes[root].parent == nil {
            total.add(try evaluation.cost(of: root, nesting: 0))
        }
        return total
    }

    private static func describe(_ value: Double) -> String {
        value < 9e18 ? String(Int(value)) : "\(value)"
    }

    // MARK: - Embedded images

    /// The cost of drawing an embedded image once.
    fileprivate func embeddedImageCost(_ href: String, depth: Int) throws(ImageCodecError) -> Cost {
        guard href.hasPrefix("data:"), let comma = href.firstIndex(of: ",") else { return Cost() }  // Files and URLs do not load.
        let header = href[href.index(href.startIndex, offsetBy: 5)..<comma].lowercased()
        let payload = href[href.index(after: comma)...]
        let data: Data?
        if header.hasSuffix(";base64") {
            data = Data(base64Encoded: String(payload), options: .ignoreUnknownCharacters)
        } else {
            data = SVGMarkup.percentDecoded(payload)
        }
        guard let data else { return Cost() }  // librsvg cannot read it either.
        func refuse(_ why: String) -> ImageCodecError {
            SVGLibrary.error(.limitExceeded, .header, "an embedded image (\(header.split(separator: ";").first ?? "data")): \(why)")
        }
        if let (width, height) = Self.rasterSize(data) {
            try limits.check(width: width, height: height, bytesPerPixel: 4, format: .svg, codec: SVGLibrary.codecName)
            return Cost(elements: 1, embeddedPixels: Double(width) * Double(height))
        }
        if SVGPlugin.isSVG(data) {
            guard depth < 4 else { throw refuse("SVG documents nested more than 4 deep") }
            return try evaluate(data, depth: depth + 1)
        }
        throw refuse("only PNG, JPEG and SVG are drawn (gdk-pixbuf would decode other formats without limits)")
    }

    /// The size a PNG or JPEG declares; `nil` for anything else.
    static func rasterSize(_ data: Data) -> (Int, Int)? {
        let bytes = [UInt8](data.prefix(1 << 20))
        func u16(_ i: Int) -> Int? { i + 1 < bytes.count ? Int(bytes[i]) << 8 | Int(bytes[i + 1]) : nil }
        func u32(_ i: Int) -> Int? { guard let a = u16(i), let b = u16(i + 2) else { return nil }; return a << 16 | b }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            guard let width = u32(16), let height = u32(20) else { return (Int(Int32.max), Int(Int32.max)) }
            return (width, height)
        }
        if bytes.starts(with: [0xFF, 0xD8]) {
            var offset = 2
            while offset + 4 <= bytes.count {
                guard bytes[offset] == 0xFF else { offset += 1; continue }
                let marker = bytes[offset + 1]
                if marker == 0xFF { offset += 1; continue }
                if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { offset += 2; continue }
                guard let length = u16(offset + 2) else { break }
                if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker), let height = u16(offset + 5), let width = u16(offset + 7) {
                    return (width, height)
                }
                offset += 2 + length
            }
            // No frame header within the first MiB: it cannot be drawn, but refuse rather than guess.
            return (Int(Int32.max), Int(Int32.max))
        }
        return nil
    }
}

// MARK: - Costs

/// Cost of one element and everything it draws, references included.
private struct Cost {
    var elements: Double = 0
    var work: Double = 0
    /// Surfaces alive at once on its deepest path.
    var layers: Double = 0
    /// Pixels of embedded raster images.
    var embeddedPixels: Double = 0

    /// Caps the estimates: beyond it every limit is exceeded anyway.
    static let ceiling = 1e30

    mutating func add(_ other: Cost) {
        elements = min(Self.ceiling, elements + other.elements)
        work = min(Self.ceiling, work + other.work)
        embeddedPixels = min(Self.ceiling, embeddedPixels + other.embeddedPixels)
        layers = max(layers, other.layers)
    }
}

private struct Evaluation {
    let document: SVGMarkup
    let budget: SVGBudget
    let depth: Int
    var memo: [Int: Cost] = [:]
    var visiting: Set<Int> = []
    /// Deeper chains of references than this are refused (librsvg gives up far earlier).
    static let maximumNesting = 512

    /// The cost of drawing element `index` once, with everything below it and everything it
    /// references (each reference counted as often as it is used).
    mutating func cost(of index: Int, nesting: Int) throws(ImageCodecError) -> Cost {
        if let known = memo[index] { return known }
        let node = document.nodes[index]
        guard nesting < Self.maximumNesting else {
            throw SVGLibrary.error(.limitExceeded, .header, "elements and references nest more than \(Self.maximumNesting) deep")
        }
        guard visiting.insert(index).inserted else {
            throw SVGLibrary.error(.corrupt, .header, "the document's references form a cycle through <\(node.name)\(node.id.map { " id=\"\($0)\"" } ?? "")>")
        }
        defer { visiting.remove(index) }
        var total = Cost(elements: 1)
        var below = Cost()
        for child in node.children {
            below.add(try cost(of: child, nesting: nesting + 1))
        }
        let targets = (node.references + document.stylesheetReferences).compactMap { document.ids[$0] }
        for target in targets where target != index && !document.isAncestor(target, of: index) {
            below.add(try cost(of: target, nesting: nesting + 1))
        }
        if node.isEmbeddedImage, let href = node.href {
            below.add(try budget.embeddedImageCost(href, depth: depth))
        }
        // A filter this element uses: each primitive over the render area.
        var layers: Double = node.needsCompositing ? 1 : 0
        for filter in node.filterReferences(document: document) {
            let primitives = document.primitives(of: filter)
            total.work = min(Cost.ceiling, total.work + primitives.reduce(0, +) * budget.renderArea)
            layers += Double(primitives.count) + 1
        }
        total.add(below)
        total.layers = layers + below.layers
        memo[index] = total
        return total
    }
}

// MARK: - Markup

/// The parts of an SVG document the budget reads: elements, their ids, references and the
/// attributes that cost, in one pass over the bytes (no entity expansion, no namespaces beyond
/// stripping prefixes).
struct SVGMarkup {
    struct Node {
        var name: String
        var id: String?
        var href: String?
        var parent: Int?
        var children: [Int] = []
        /// Ids this element draws: `use`'s and `feImage`'s href, and `url(#…)` in the
        /// attributes (and its `style`) that reference paint servers, markers, masks, clip
        /// paths and filters.
        var references: [String] = []
        var filterIDs: [String] = []
        var needsCompositing = false
        /// A filter primitive's weight.
        var weight: Double = 0

        var isEmbeddedImage: Bool { (name == "image" || name == "feImage") && href?.hasPrefix("data:") == true }

        func filterReferences(document: SVGMarkup) -> [Int] {
            (filterIDs + document.stylesheetFilters).compactMap { document.ids[$0] }.filter { document.nodes[$0].name == "filter" }
        }
    }

    var nodes: [Node] = []
    var ids: [String: Int] = [:]
    /// `url(#…)` ids named by stylesheets, which may apply to any element.
    var stylesheetReferences: [String] = []
    var stylesheetFilters: [String] = []

    func isAncestor(_ candidate: Int, of index: Int) -> Bool {
        var current = nodes[index].parent
        while let parent = current {
            if parent == candidate { return true }
            current = nodes[parent].parent
        }
        return false
    }

    /// The weights of a filter's primitives.
    func primitives(of filter: Int) -> [Double] {
        nodes[filter].children.map { nodes[$0].weight }.filter { $0 > 0 }
    }

    static let referencingAttributes: Set<String> = ["fill", "stroke", "mask", "clip-path", "marker-start", "marker-mid", "marker-end", "marker", "filter"]

    static func parse(_ data: Data, refusingMarkupEntities: Bool) throws(ImageCodecError) -> SVGMarkup {
        var markup = SVGMarkup()
        var stack: [Int] = []
        var stylesheet = ""
        var inStyle = false
        let bytes = [UInt8](data)
        var i = 0
        let n = bytes.count
        func starts(_ text: StaticString, at position: Int) -> Bool {
            text.withUTF8Buffer { utf8 in
                guard position + utf8.count <= n else { return false }
                for k in 0..<utf8.count where bytes[position + k] != utf8[k] { return false }
                return true
            }
        }
        func find(_ text: StaticString, from position: Int) -> Int? {
            var p = position
            while p < n {
                if starts(text, at: p) { return p }
                p += 1
            }
            return nil
        }
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        while i < n {
            guard bytes[i] == UInt8(ascii: "<") else {
                let next = bytes[i...].firstIndex(of: UInt8(ascii: "<")) ?? n
                if inStyle { stylesheet += text(i..<next) }
                i = next
                continue
            }
            if starts("<!--", at: i) {
                i = (find("-->", from: i + 4) ?? n - 3) + 3
            } else if starts("<![CDATA[", at: i) {
                let end = find("]]>", from: i + 9) ?? n
                if inStyle { stylesheet += text((i + 9)..<end) }
                i = min(n, end + 3)
            } else if starts("<!", at: i) {
                // DOCTYPE, with an internal subset in brackets.
                var p = i + 2
                var bracket = 0
                var quote: UInt8 = 0
                let declarationStart = i
                while p < n {
                    let c = bytes[p]
                    if quote != 0 { if c == quote { quote = 0 } }
                    else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") { quote = c }
                    else if c == UInt8(ascii: "[") { bracket += 1 }
                    else if c == UInt8(ascii: "]") { bracket -= 1 }
                    else if c == UInt8(ascii: ">"), bracket <= 0 { break }
                    p += 1
                }
                let declaration = text(declarationStart..<min(p, n))
                if refusingMarkupEntities, declaration.contains("<!ENTITY") {
                    // An entity whose text is markup would add elements this scan never sees.
                    for part in declaration.split(separator: "<!ENTITY", omittingEmptySubsequences: false).dropFirst()
                    where part.contains("<") || part.contains("&#60;") || part.lowercased().contains("&#x3c;") {
                        let name = part.split(separator: " ").first.map(String.init) ?? "?"
                        throw SVGLibrary.error(.limitExceeded, .header, "the entity \(name) expands to markup, which SVG documents from strangers may not hold")
                    }
                }
                i = p + 1
            } else if starts("<?", at: i) {
                i = (find("?>", from: i + 2) ?? n - 2) + 2
            } else if starts("</", at: i) {
                let end = bytes[i...].firstIndex(of: UInt8(ascii: ">")) ?? n
                let name = localName(trimmed(Substring(text((i + 2)..<end))))
                if let open = stack.lastIndex(where: { markup.nodes[$0].name == name }) {
                    stack.removeSubrange(open...)
                }
                if name == "style" { inStyle = false }
                i = end + 1
            } else {
                // A start tag: name, then attributes until `>` outside quotes.
                var p = i + 1
                while p < n, !isSpace(bytes[p]), bytes[p] != UInt8(ascii: ">"), bytes[p] != UInt8(ascii: "/") { p += 1 }
                let name = localName(text((i + 1)..<p))
                var attributes: [String: String] = [:]
                var selfClosing = false
                while p < n {
                    while p < n, isSpace(bytes[p]) { p += 1 }
                    guard p < n else { break }
                    if bytes[p] == UInt8(ascii: ">") { p += 1; break }
                    if bytes[p] == UInt8(ascii: "/") { selfClosing = true; p += 1; continue }
                    let nameStart = p
                    while p < n, !isSpace(bytes[p]), bytes[p] != UInt8(ascii: "="), bytes[p] != UInt8(ascii: ">"), bytes[p] != UInt8(ascii: "/") { p += 1 }
                    let attribute = localName(text(nameStart..<p))
                    while p < n, isSpace(bytes[p]) { p += 1 }
                    guard p < n, bytes[p] == UInt8(ascii: "=") else {
                        if p == nameStart { p += 1 }
                        continue
                    }
                    p += 1
                    while p < n, isSpace(bytes[p]) { p += 1 }
                    guard p < n else { break }
                    let quote = bytes[p]
                    if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                        let end = bytes[(p + 1)...].firstIndex(of: quote) ?? n
                        attributes[attribute] = decodeEntities(text((p + 1)..<end))
                        p = end + 1
                    } else {
                        let start = p
                        while p < n, !isSpace(bytes[p]), bytes[p] != UInt8(ascii: ">") { p += 1 }
                        attributes[attribute] = text(start..<p)
                    }
                }
                var node = Node(name: name, parent: stack.last)
                node.id = attributes["id"]
                node.href = attributes["href"]
                if name == "use" || name == "feImage", let href = node.href, href.hasPrefix("#") {
                    node.references.append(String(href.dropFirst()))
                }
                var declarations = attributes.filter { referencingAttributes.contains($0.key) || $0.key == "opacity" }
                if let style = attributes["style"] {
                    for declaration in style.split(separator: ";") {
                        let parts = declaration.split(separator: ":", maxSplits: 1).map { trimmed($0) }
                        if parts.count == 2 { declarations[parts[0].lowercased()] = parts[1] }
                    }
                }
                for (key, value) in declarations {
                    let ids = urlReferences(value)
                    if referencingAttributes.contains(key) { node.references += ids }
                    if key == "filter" { node.filterIDs += ids }
                    if ["mask", "clip-path", "filter"].contains(key), !ids.isEmpty { node.needsCompositing = true }
                    if key == "opacity", let opacity = Double(value), opacity < 1 { node.needsCompositing = true }
                }
                node.weight = primitiveWeight(name, attributes)
                let index = markup.nodes.count
                markup.nodes.append(node)
                if let parent = stack.last { markup.nodes[parent].children.append(index) }
                if let id = node.id, markup.ids[id] == nil { markup.ids[id] = index }
                if !selfClosing {
                    // libxml2 itself stops at 256 levels.
                    guard stack.count < 256 else {
                        throw SVGLibrary.error(.limitExceeded, .header, "elements nest more than 256 deep")
                    }
                    stack.append(index)
                    if name == "style" { inStyle = true }
                }
                i = p
            }
        }
        // Stylesheets: any `url(#…)` they hold may apply to any element.
        markup.stylesheetReferences = urlReferences(stylesheet)
        if stylesheet.lowercased().contains("filter") {
            markup.stylesheetFilters = markup.stylesheetReferences
        }
        if markup.nodes.isEmpty { markup.nodes.append(Node(name: "svg")) }
        return markup
    }

    /// A filter primitive's cost per pixel of its region, in operations of about a nanosecond
    /// (measured with librsvg 2.54 on a 1 MP region: 10 turbulence octaves 0.74 s, a morphology
    /// of radius 10 3.5 s, a 5 × 5 convolution 0.2 s, a blur 0.14 s, lighting 0.07 s); 0 for
    /// anything that is not a primitive.
    static func primitiveWeight(_ name: String, _ attributes: [String: String]) -> Double {
        func numbers(_ key: String) -> [Double] {
            (attributes[key] ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Double($0) }.filter(\.isFinite)
        }
        switch name {
        case "feTurbulence":
            return 75 * max(1, numbers("numOctaves").first ?? 1)
        case "feMorphology":
            let radius = numbers("radius")
            let rx = max(0, radius.first ?? 0), ry = max(0, radius.count > 1 ? radius[1] : rx)
            return 8 * max(1, (2 * rx + 1) * (2 * ry + 1))
        case "feConvolveMatrix":
            let order = numbers("order")
            let x = max(1, order.first ?? 3), y = max(1, order.count > 1 ? order[1] : x)
            return 8 * x * y
        case "feGaussianBlur", "feDropShadow": return 150
        case "feDiffuseLighting", "feSpecularLighting": return 70
        case "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feDisplacementMap", "feFlood", "feImage",
             "feMerge", "feOffset", "feTile":
            return 10
        default:
            return 0
        }
    }

    /// The ids of every `url(#id)` in a value.
    static func urlReferences(_ value: String) -> [String] {
        var ids: [String] = []
        var rest = Substring(value)
        while let start = rest.firstRange(of: "url(") {
            rest = rest[start.upperBound...]
            guard let end = rest.firstIndex(of: ")") else { break }
            let inner = trimmed(rest[..<end], also: ["\"", "'"])
            if let hash = inner.firstIndex(of: "#") { ids.append(String(inner[inner.index(after: hash)...])) }
            rest = rest[end...]
        }
        return ids
    }

    static func localName(_ name: String) -> String {
        name.split(separator: ":").last.map(String.init) ?? name
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The five predefined entities and character references, enough for ids and hrefs.
    static func decodeEntities(_ value: String) -> String {
        guard value.contains("&") else { return value }
        return value.replacing("&quot;", with: "\"").replacing("&apos;", with: "'")
            .replacing("&lt;", with: "<").replacing("&gt;", with: ">")
            .replacing("&#35;", with: "#").replacing("&amp;", with: "&")
    }

    /// `text` without leading and trailing white space (and the characters in `also`).
    static func trimmed(_ text: Substring, also: Set<Character> = []) -> String {
        let drop = { (c: Character) in c == " " || c == "\t" || c == "\n" || c == "\r" || also.contains(c) }
        return String(text.drop(while: drop).reversed().drop(while: drop).reversed())
    }

    /// A `data:` URL's payload with its `%XX` escapes decoded; `nil` for a malformed escape.
    static func percentDecoded(_ text: Substring) -> Data? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return Data(bytes)
    }
}
