/// How a progressive run splits a file into chunks.
public enum ProgressiveFeeding: Sendable, Hashable, CustomStringConvertible {
    /// One byte at a time: the harshest test of a suspending decoder.
    case byteByByte
    /// Chunks of random lengths from a seeded generator (about 32 chunks per file).
    case randomChunks(seed: UInt64)
    /// `count` chunks of equal length, as a download in `count` parts.
    case equalChunks(count: Int)
    /// All of the data in one partial call, then the final decode with the same data.
    case whole

    public var description: String {
        switch self {
        case .byteByByte: "byte by byte"
        case .randomChunks(let seed): "in random chunks (seed \(seed))"
        case .equalChunks(let count): "in \(count) equal chunks"
        case .whole: "whole"
        }
    }

    /// The lengths of the prefixes passed to the partial calls, ending with `count`.
    func prefixLengths(count: Int) -> [Int] {
        guard count > 0 else { return [0] }
        switch self {
        case .byteByByte:
            return Array(1...count)
        case .whole:
            return [count]
        case .equalChunks(let parts):
            let parts = max(1, min(parts, count))
            return (1...parts).map { count * $0 / parts }
        case .randomChunks(let seed):
            var generator = SeededGenerator(seed: seed)
            let maxChunk = max(1, count / 16)
            var lengths: [Int] = []
            var end = 0
            while end < count {
                // Mostly mid-sized chunks, with runs of single bytes now and then.
                let size = Int.random(in: 0..<8, using: &generator) == 0 ? 1 : Int.random(in: 1...maxChunk, using: &generator)
                end = min(count, end + size)
                lengths.append(end)
            }
            return lengths
        }
    }
}
