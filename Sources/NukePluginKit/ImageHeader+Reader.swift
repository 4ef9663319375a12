public import NukeCore

extension ImageHeader {
    /// Bounds-checked big-endian reads over a byte buffer (and single bytes); `nil` past the end.
    ///
    /// For header hooks (`ImageDecoderRegistering.parseHeader(_:)`): a hook that reads
    /// through it never reads past the data received so far.
    public struct Reader {
        /// The bytes read.
        public let bytes: UnsafeBufferPointer<UInt8>

        /// Creates a reader over `bytes`.
        public init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        /// The number of bytes.
        public var count: Int { bytes.count }

        /// The byte at offset `i`, or `nil` past the end.
        public func u8(_ i: Int) -> Int? {
            guard i >= 0, i < bytes.count else { return nil }
            return Int(bytes[i])
        }

        /// The big-endian 16-bit value at offset `i`, or `nil` when it does not fit.
        public func u16be(_ i: Int) -> Int? {
            guard let a = u8(i), let b = u8(i + 1) else { return nil }
            return a << 8 | b
        }

        /// The big-endian 32-bit value at offset `i`, or `nil` when it does not fit.
        public func u32be(_ i: Int) -> Int? {
            guard let a = u16be(i), let b = u16be(i + 2) else { return nil }
            return a << 16 | b
        }

        /// `true` when the four bytes at `i` spell `code`.
        public func fourCC(_ i: Int, _ code: StaticString) -> Bool {
            guard i >= 0, i + 4 <= bytes.count else { return false }
            return code.withUTF8Buffer { p in
                p.count == 4 && bytes[i] == p[0] && bytes[i + 1] == p[1] && bytes[i + 2] == p[2] && bytes[i + 3] == p[3]
            }
        }
    }
}
