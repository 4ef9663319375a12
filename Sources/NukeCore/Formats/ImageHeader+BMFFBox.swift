import Foundation

extension ImageHeader {
    /// One ISO-BMFF box: its type and byte range.
    struct BMFFBox {
        let type: String
        /// The first byte after the box header.
        let payload: Int
        /// One past the last byte (`Int.max` for a box that runs to the end of the file).
        let end: Int

        /// Reads the box header at `offset`, or returns `nil` when it is incomplete or malformed.
        init?(_ b: Reader, at offset: Int, limit: Int) {
            guard let size32 = b.u32be(offset), offset + 8 <= b.count else { return nil }
            let name = String(decoding: b.bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            var payload = offset + 8
            var end: Int
            switch size32 {
            case 0:
                end = limit
            case 1:
                guard let size64 = b.u64be(offset + 8), size64 >= 16, size64 < UInt64(Int.max / 2) else { return nil }
                payload = offset + 16
                end = offset + Int(size64)
            default:
                guard size32 >= 8 else { return nil }
                end = offset + size32
            }
            guard end <= limit else { return nil }
            self.type = name
            self.payload = payload
            self.end = end
        }

        /// The boxes inside this one, after `skipping` bytes (4 for a full box's version and flags).
        func children(_ b: Reader, skipping: Int) -> [BMFFBox] {
            var result: [BMFFBox] = []
            var i = payload + skipping
            let limit = min(end, b.count)
            while i + 8 <= limit, result.count < 4_096 {
                guard let child = BMFFBox(b, at: i, limit: limit), child.end > i else { break }
                result.append(child)
                i = child.end
            }
            return result
        }
    }
}
