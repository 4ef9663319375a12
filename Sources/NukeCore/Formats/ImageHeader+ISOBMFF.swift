import Foundation

extension ImageHeader {
    /// Reads the size of the primary item of an ISO-BMFF image (HEIC, HEIF, AVIF): the `ispe`
    /// property that `meta/iprp/ipma` associates with the `pitm` item, and its `pixi` bit depth.
    ///
    /// Falls back to the largest `ispe` when the associations cannot be followed.
    static func parseISOBMFF(_ b: Reader, type: ImageType) -> ParseResult {
        var i = 0
        while true {
            guard let box = BMFFBox(b, at: i, limit: Int.max) else { return .needsMoreData }
            if box.type == "meta" {
                // A size-0 box runs to the end of the file: parse what there is.
                guard box.end <= b.count || box.end == Int.max else { return .needsMoreData }
                return parseMeta(b, box, type: type).map(ParseResult.parsed) ?? .unavailable
            }
            guard box.end > i, box.end != Int.max else { return .unavailable }
            i = box.end
        }
    }

    private static func parseMeta(_ b: Reader, _ meta: BMFFBox, type: ImageType) -> ImageHeader? {
        var primary: Int?
        var properties: [BMFFBox] = []
        var associations: [Int: [Int]] = [:]
        for child in meta.children(b, skipping: 4) {
            switch child.type {
            case "pitm":
                guard let version = b.u8(child.payload) else { return nil }
                primary = version == 0 ? b.u16be(child.payload + 4) : b.u32be(child.payload + 4)
            case "iprp":
                for grandchild in child.children(b, skipping: 0) {
                    if grandchild.type == "ipco" {
                        properties = grandchild.children(b, skipping: 0)
                    } else if grandchild.type == "ipma" {
                        associations = parseIPMA(b, grandchild)
                    }
                }
            default:
                break
            }
        }
        func property(_ name: String, for item: Int?) -> BMFFBox? {
            guard let item, let indices = associations[item] else { return nil }
            for index in indices where index >= 1 && index <= properties.count && properties[index - 1].type == name {
                return properties[index - 1]
            }
            return nil
        }
        func size(_ box: BMFFBox) -> (Int, Int)? {
            guard let w = b.u32be(box.payload + 4), let h = b.u32be(box.payload + 8), w > 0, h > 0 else { return nil }
            return (w, h)
        }
        // Areas in Double: two 32-bit sides can overflow Int.
        func area(_ box: BMFFBox) -> Double { size(box).map { Double($0.0) * Double($0.1) } ?? 0 }
        let spatial = property("ispe", for: primary)
            ?? properties.filter { $0.type == "ispe" }.max { area($0) < area($1) }
        guard let spatial, let (width, height) = size(spatial) else { return nil }
        var header = ImageHeader(type: type, width: width, height: height)
        if let pixi = property("pixi", for: primary), let channels = b.u8(pixi.payload + 4), channels > 0 {
            header.componentCount = channels
            header.bitDepth = b.u8(pixi.payload + 5)
        }
        return header
    }

    /// Item ID → 1-based property indices.
    private static func parseIPMA(_ b: Reader, _ box: BMFFBox) -> [Int: [Int]] {
        guard let version = b.u8(box.payload), let flags = b.u8(box.payload + 3),
              let count = b.u32be(box.payload + 4) else { return [:] }
        var result: [Int: [Int]] = [:]
        var i = box.payload + 8
        for _ in 0..<min(count, 65_536) {
            guard let item = version < 1 ? b.u16be(i) : b.u32be(i) else { break }
            i += version < 1 ? 2 : 4
            guard let n = b.u8(i) else { break }
            i += 1
            var indices: [Int] = []
            for _ in 0..<n {
                if flags & 1 != 0 {
                    guard let v = b.u16be(i) else { break }
                    indices.append(v & 0x7FFF)
                    i += 2
                } else {
                    guard let v = b.u8(i) else { break }
                    indices.append(v & 0x7F)
                    i += 1
                }
            }
            guard i <= box.end else { break }
            result[item] = indices
        }
        return result
    }
}
