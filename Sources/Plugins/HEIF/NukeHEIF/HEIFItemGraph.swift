#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// Which coded images decoding a HEIF file's primary image makes libheif decode, read from the
/// `meta` box before libheif sees the file.
///
/// A grid (or overlay) item needs the items its `dimg` references name, once per reference; an
/// image needs the auxiliary images (alpha, depth) whose `auxl` references point at it. libheif
/// 1.15 follows these without checking for loops or counting: a 2.7 KB file whose grid's alpha
/// is the grid itself (found by the heif fuzz target) made it decode without end, with thousands
/// of threads and gigabytes. ``check(limits:format:)`` refuses a cycle, and work out of proportion
/// to the limits, before libheif starts.
struct HEIFItemGraph {
    /// The primary item (`pitm`), when the file names one.
    var primary: UInt32?
    /// For each item, the items decoding it needs, repeats included.
    var needs: [UInt32: [UInt32]] = [:]
    /// Each item's size (`ispe`) in pixels, when it has one.
    var pixels: [UInt32: Int] = [:]
    /// Each item's width and height (`ispe`), when it has one.
    var sizes: [UInt32: ImageSize] = [:]
    /// Each item's rotation (`irot`) in quarter turns, when it has one.
    var quarterTurns: [UInt32: Int] = [:]
    /// Each item's largest bits per channel (`pixi`), when it has one.
    var bitDepths: [UInt32: Int] = [:]
    /// The thumbnails of each item (`thmb` references), which decode to size may decode instead.
    var thumbnails: [UInt32: [UInt32]] = [:]
    /// Each item's type (`infe`, versions 2 and 3), such as `"av01"` or `"grid"`.
    var types: [UInt32: String] = [:]
    /// The bytes of each item's extents (`iloc`) added up, for the items it lists.
    var dataLengths: [UInt32: Int] = [:]

    /// The items that are coded images (`hvc1`, `av01`), not grids, overlays or derived images.
    var codedItems: [UInt32] {
        types.filter { $0.value == "hvc1" || $0.value == "av01" }.keys.sorted()
    }

    /// The most coded images one decode may need: a 100 MP image in 128 × 128 tiles needs 6,104.
    static let maximumDecodes = 16_384

    /// Reads the graph, or returns `nil` when the file has no `meta` box this reader can walk
    /// (libheif then reports what is wrong with it).
    static func parse(_ data: Data) -> HEIFItemGraph? {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> HEIFItemGraph? in
            guard let meta = BoxReader(raw).boxes(in: 0..<raw.count).first(where: { $0.type == "meta" }) else { return nil }
            return parse(meta: meta, BoxReader(raw))
        }
    }

    /// The primary image's header for the core's limit gate, read on the host before any byte
    /// reaches libheif (or a helper): its `ispe` size, turned by its `irot`, and its `pixi` bit
    /// depth. The size is before any `clap` crop, so an upper bound for the limits.
    ///
    /// - Returns: `.needsMoreData` until the `meta` box is complete; `.unavailable` when it names
    ///   no primary image with a size.
    static func header(_ data: Data, type: ImageType) -> ImageHeader.ParseResult {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> ImageHeader.ParseResult in
            let reader = BoxReader(raw)
            let boxes = reader.boxes(in: 0..<raw.count)
            guard let meta = boxes.first(where: { $0.type == "meta" }) else { return .needsMoreData }
            guard !meta.isCut else { return .needsMoreData }
            let graph = parse(meta: meta, reader)
            guard let primary = graph.primary, let size = graph.sizes[primary], size.width > 0, size.height > 0 else { return .unavailable }
            let turned = (graph.quarterTurns[primary] ?? 0) % 2 == 1
            return .parsed(ImageHeader(type: type, width: turned ? size.height : size.width, height: turned ? size.width : size.height,
                                       bitDepth: graph.bitDepths[primary]))
        }
    }

    private static func parse(meta: BoxReader.Box, _ reader: BoxReader) -> HEIFItemGraph {
        var graph = HEIFItemGraph()
        // meta is a full box: version and flags, then its children. libheif reads the first
        // box of each type.
        var seen: Set<String> = []
        let children = reader.boxes(in: meta.fullBoxChildren).filter { seen.insert($0.type).inserted }
        for box in children {
            switch box.type {
            case "pitm":
                guard let version = reader.byte(at: box.body.lowerBound) else { continue }
                graph.primary = reader.integer(at: box.body.lowerBound + 4, bytes: version == 0 ? 2 : 4).map(UInt32.init)
            case "iref":
                graph.readReferences(box, reader)
            case "iprp":
                graph.readProperties(box, reader)
            case "iinf":
                graph.readItemTypes(box, reader)
            case "iloc":
                graph.readLocations(box, idat: children.first { $0.type == "idat" }, reader)
            default:
                continue
            }
        }
        return graph
    }

    /// Reads `iref` as libheif 1.15 reads it (`Box_iref::parse`): one reference after another to
    /// the end of `iref`, each a box header whose size is read and ignored, the item it is from, a
    /// count, and the items it is to, up to the end of `iref`. A reference whose size runs past
    /// `iref` (or falls short of its entries) does not end the list, as it would for boxes: the
    /// heif fuzz target's second cycle (a grid whose alpha is itself) hid its `auxl` reference
    /// inside a `dimg` reference that declared 1,266 bytes.
    private mutating func readReferences(_ iref: BoxReader.Box, _ reader: BoxReader) {
        guard let version = reader.byte(at: iref.body.lowerBound) else { return }
        let idBytes = version == 0 ? 2 : 4
        let end = iref.body.upperBound
        var at = iref.fullBoxChildren.lowerBound
        while at < end {
            // The header: size, type, a 64-bit size when the size is 1, a UUID for "uuid".
            guard let size = reader.integer(at: at, bytes: 4), at + 8 <= end else { return }
            let type = String(decoding: UnsafeRawBufferPointer(rebasing: reader.bytes[(at + 4)..<(at + 8)]), as: UTF8.self)
            at += 8 + (size == 1 ? 8 : 0) + (type == "uuid" ? 16 : 0)
            guard at + idBytes + 2 <= end, let from = reader.integer(at: at, bytes: idBytes),
                  let count = reader.integer(at: at + idBytes, bytes: 2) else { return }
            at += idBytes + 2
            for _ in 0..<count {
                guard at + idBytes <= end, let to = reader.integer(at: at, bytes: idBytes) else { return }
                at += idBytes
                switch type {
                case "dimg": needs[UInt32(from), default: []].append(UInt32(to))   // the grid needs its tiles
                case "auxl": needs[UInt32(to), default: []].append(UInt32(from))   // the image needs its alpha or depth
                case "thmb": thumbnails[UInt32(to), default: []].append(UInt32(from))
                default: break
                }
                if at >= end { break }
            }
        }
    }

    private mutating func readProperties(_ iprp: BoxReader.Box, _ reader: BoxReader) {
        let children = reader.boxes(in: iprp.body)
        guard let ipco = children.first(where: { $0.type == "ipco" }), let ipma = children.first(where: { $0.type == "ipma" }) else { return }
        // Property indices count from 1, in ipco's order.
        var sizes: [Int: ImageSize] = [:]
        var turns: [Int: Int] = [:]
        var depths: [Int: Int] = [:]
        for (index, property) in reader.boxes(in: ipco.body).enumerated() {
            let at = property.body.lowerBound
            switch property.type {
            case "ispe":
                if let width = reader.integer(at: at + 4, bytes: 4), let height = reader.integer(at: at + 8, bytes: 4) {
                    sizes[index + 1] = ImageSize(width: width, height: height)
                }
            case "irot":
                // Anticlockwise, in quarter turns (the low two bits).
                if let angle = reader.byte(at: at) { turns[index + 1] = angle & 3 }
            case "pixi":
                // A full box: the number of channels, then each one's bits.
                if let channels = reader.byte(at: at + 4) {
                    depths[index + 1] = (0..<channels).compactMap { reader.byte(at: at + 5 + $0) }.max()
                }
            default:
                continue
            }
        }
        guard let version = reader.byte(at: ipma.body.lowerBound), let flags = reader.byte(at: ipma.body.lowerBound + 3),
              let entries = reader.integer(at: ipma.body.lowerBound + 4, bytes: 4) else { return }
        var at = ipma.body.lowerBound + 8
        for _ in 0..<min(entries, ipma.body.count) {
            let idBytes = version < 1 ? 2 : 4
            guard let item = reader.integer(at: at, bytes: idBytes), let associations = reader.byte(at: at + idBytes) else { return }
            at += idBytes + 1
            let indexBytes = flags & 1 != 0 ? 2 : 1
            for _ in 0..<associations {
                guard let value = reader.integer(at: at, bytes: indexBytes) else { return }
                at += indexBytes
                let index = value & (indexBytes == 2 ? 0x7FFF : 0x7F)
                if let size = sizes[index] {
                    self.sizes[UInt32(item)] = size
                    pixels[UInt32(item)] = size.width.multipliedReportingOverflow(by: size.height).overflow ? Int.max : size.width * size.height
                }
                if let turn = turns[index] { quarterTurns[UInt32(item)] = turn }
                if let depth = depths[index] { bitDepths[UInt32(item)] = depth }
            }
        }
    }

    private mutating func readItemTypes(_ iinf: BoxReader.Box, _ reader: BoxReader) {
        guard let version = reader.byte(at: iinf.body.lowerBound) else { return }
        let countBytes = version == 0 ? 2 : 4
        for entry in reader.boxes(in: min(iinf.body.lowerBound + 4 + countBytes, iinf.body.upperBound)..<iinf.body.upperBound) where entry.type == "infe" {
            guard let entryVersion = reader.byte(at: entry.body.lowerBound), entryVersion >= 2 else { continue }
            let idBytes = entryVersion == 2 ? 2 : 4
            let at = entry.body.lowerBound + 4
            guard let item = reader.integer(at: at, bytes: idBytes), at + idBytes + 6 <= entry.body.upperBound else { continue }
            let type = at + idBytes + 2
            types[UInt32(item)] = String(decoding: UnsafeRawBufferPointer(rebasing: reader.bytes[type..<(type + 4)]), as: UTF8.self)
        }
    }

    /// Reads `iloc` as libheif 1.15 reads it (`Box_iloc::parse`, `read_data`), which is not quite
    /// the standard: an offset, length or base offset field that is not 4 or 8 bytes wide is read
    /// as 0 without consuming a byte; the extent index exists in version 2 only; an item cut off by
    /// the box's end is dropped; the first entry for an item is the one used. Data in `idat`
    /// (construction method 1) counts when `idat` holds it; libheif ignores the error otherwise
    /// and decodes nothing.
    private mutating func readLocations(_ iloc: BoxReader.Box, idat: BoxReader.Box?, _ reader: BoxReader) {
        let body = iloc.body
        guard let version = reader.byte(at: body.lowerBound), let sizes = reader.integer(at: body.lowerBound + 4, bytes: 2) else { return }
        let (offsetBytes, lengthBytes, baseBytes) = (sizes >> 12 & 15, sizes >> 8 & 15, sizes >> 4 & 15)
        let indexBytes = version > 1 ? sizes & 15 : 0
        let idBytes = version < 2 ? 2 : 4
        var at = body.lowerBound + 6
        /// A field as libheif reads it: 4 or 8 bytes, else none (0). `nil` past the box's end.
        func field(_ width: Int) -> Int? {
            guard width == 4 || width == 8 else { return 0 }
            guard at + width <= body.upperBound, let value = reader.integer(at: at, bytes: width) else { return nil }
            at += width
            return value
        }
        guard at + idBytes <= body.upperBound, let count = reader.integer(at: at, bytes: idBytes) else { return }
        at += idBytes
        for _ in 0..<min(count, body.count) {
            guard at + idBytes + (version >= 1 ? 2 : 0) + 2 <= body.upperBound, let item = reader.integer(at: at, bytes: idBytes) else { return }
            at += idBytes
            var method = 0
            if version >= 1 {
                method = (reader.integer(at: at, bytes: 2) ?? 0) & 15
                at += 2
            }
            at += 2   // data reference index
            guard let base = field(baseBytes), at + 2 <= body.upperBound, let extents = reader.integer(at: at, bytes: 2) else { return }
            at += 2
            var total = 0
            for _ in 0..<extents {
                if version > 1 && indexBytes > 0 { guard field(indexBytes) != nil else { return } }
                guard let offset = field(offsetBytes), let length = field(lengthBytes) else { return }
                if method == 1 {
                    // libheif reads nothing from an idat that does not hold the extent.
                    let (start, overflow) = base.addingReportingOverflow(offset)
                    guard let idat, !overflow, start <= idat.body.count, length <= idat.body.count - start else { continue }
                }
                total = Self.saturatingSum(total, length)
            }
            if dataLengths[UInt32(item)] == nil, method <= 1 { dataLengths[UInt32(item)] = total }
        }
    }

    /// Throws when decoding the primary image (or, without one, any image) would go round a
    /// cycle of references (`.corrupt`), or would need more than ``maximumDecodes`` coded images
    /// or more coded pixels than three times the limits' pixel count (image, alpha and depth)
    /// plus 128 × 128 per coded image for padding to whole blocks (`.limitExceeded`).
    func check(limits: ImageLimits, format: ImageType) throws(ImageCodecError) {
        let roots = primary.map { [$0] } ?? needs.keys.sorted()
        // Depth-first, without recursion: every item's decodes and coded pixels once its needs are known.
        var decodes: [UInt32: Int] = [:]
        var codedPixels: [UInt32: Int] = [:]
        var onPath: Set<UInt32> = []
        for root in roots where decodes[root] == nil {
            var stack: [(item: UInt32, next: Int)] = [(root, 0)]
            onPath.insert(root)
            while let top = stack.last {
                let children = needs[top.item] ?? []
                if top.next < children.count {
                    stack[stack.count - 1].next += 1
                    let child = children[top.next]
                    if onPath.contains(child) {
                        let cycle = (stack.drop(while: { $0.item != child }).map(\.item) + [child]).map(String.init).joined(separator: " → ")
                        throw HEIFLibrary.error(.corrupt, .header, format: format,
                                                "items reference each other in a cycle (\(cycle)): libheif would decode them without end")
                    }
                    if decodes[child] == nil {
                        stack.append((child, 0))
                        onPath.insert(child)
                    }
                    continue
                }
                stack.removeLast()
                onPath.remove(top.item)
                var count = 1
                var coded = children.isEmpty ? pixels[top.item] ?? 0 : 0
                for child in children {
                    count = Self.saturatingSum(count, decodes[child] ?? 0)
                    coded = Self.saturatingSum(coded, codedPixels[child] ?? 0)
                }
                decodes[top.item] = count
                codedPixels[top.item] = coded
            }
        }
        try checkCodedData(from: roots, format: format)
        let count = roots.reduce(0) { Self.saturatingSum($0, decodes[$1] ?? 0) }
        if count > Self.maximumDecodes {
            throw HEIFLibrary.error(.limitExceeded, .header, format: format,
                                    "the image needs \(count == Int.max ? "countless" : String(count)) coded images decoded (grid tiles, alpha, depth), more than \(Self.maximumDecodes)")
        }
        let coded = roots.reduce(0) { Self.saturatingSum($0, codedPixels[$1] ?? 0) }
        // Coded images are padded to whole blocks: up to 128 × 128 pixels more each.
        let (tripled, overflow) = limits.maxPixelCount.multipliedReportingOverflow(by: 3)
        let budget = overflow ? Int.max : Self.saturatingSum(tripled, count * 128 * 128)
        if coded > budget {
            throw HEIFLibrary.error(.limitExceeded, .header, format: format,
                                    "the image needs \(coded == Int.max ? "countless" : String(coded)) coded pixels decoded (grid tiles, alpha, depth), more than 3 × the limit of \(limits.maxPixelCount) and the padding of \(count) coded images")
        }
    }

    /// Throws `.corrupt` when an AV1 image that decoding `roots` or one of their thumbnails may
    /// need has no coded bytes. libheif 1.15 hands dav1d an empty buffer for it, dav1d refuses
    /// it, and libheif never releases the buffer's 40-byte reference: every such decode leaked
    /// (found by the heif fuzz target). The graph is acyclic here (checked before).
    private func checkCodedData(from roots: [UInt32], format: ImageType) throws(ImageCodecError) {
        var seen: Set<UInt32> = []
        var pending = roots + roots.flatMap { thumbnails[$0] ?? [] }
        while let item = pending.popLast() {
            guard seen.insert(item).inserted else { continue }
            if types[item] == "av01", let length = dataLengths[item], length == 0 {
                throw HEIFLibrary.error(.corrupt, .header, format: format, "the AV1 image item \(item) has no coded data")
            }
            pending += needs[item] ?? []
        }
    }

    private static func saturatingSum(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }
}

/// ISO base media file format boxes over bytes, every read bounds-checked.
private struct BoxReader {
    struct Box {
        var type: String
        /// The bytes after the box's header.
        var body: Range<Int>
        /// Whether the box's size runs past the bytes read: its end has not arrived (or never will).
        var isCut = false

        /// A full box's children: the body after its version and flags (empty when too short).
        var fullBoxChildren: Range<Int> {
            min(body.lowerBound + 4, body.upperBound)..<body.upperBound
        }
    }

    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func byte(at offset: Int) -> Int? {
        offset >= 0 && offset < bytes.count ? Int(bytes[offset]) : nil
    }

    /// A big-endian unsigned integer of `count` (≤ 8) bytes.
    func integer(at offset: Int, bytes count: Int) -> Int? {
        guard offset >= 0, count <= 8, offset + count <= bytes.count else { return nil }
        var value: UInt64 = 0
        for i in 0..<count { value = value << 8 | UInt64(bytes[offset + i]) }
        return value > UInt64(Int.max) ? nil : Int(value)
    }

    /// The boxes one after another in `range`. A box whose size runs past the range is read up
    /// to the range's end and is the last, as libheif reads it (the fuzzed file's `auxl`
    /// reference declares 4 GB in 14 bytes); one too small for its own header ends the list.
    func boxes(in range: Range<Int>) -> [Box] {
        var result: [Box] = []
        var at = range.lowerBound
        while at + 8 <= range.upperBound, let size32 = integer(at: at, bytes: 4) {
            let type = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(at + 4)..<(at + 8)]), as: UTF8.self)
            var header = 8
            var size = size32
            if size32 == 1 {
                guard let large = integer(at: at + 8, bytes: 8) else { break }
                size = large
                header = 16
            } else if size32 == 0 {
                size = range.upperBound - at
            }
            guard size >= header, at + header <= range.upperBound else { break }
            let isCut = size > range.upperBound - at
            size = min(size, range.upperBound - at)
            result.append(Box(type: type, body: (at + header)..<(at + size), isCut: isCut))
            at += size
        }
        return result
    }
}
