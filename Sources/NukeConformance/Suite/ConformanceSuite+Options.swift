import NukeCore
import NukeSession

extension ConformanceSuite {
    /// What a ``ConformanceSuite`` checks and how hard it tries.
    ///
    /// The defaults keep a run over a few dozen small fixtures within seconds in a debug
    /// build; raise the caps for a nightly run.
    public struct Options: Sendable {
        /// The limits decoders get, for every check but ``ConformanceCheck/limits`` (which
        /// derives its own from each image). Default: `ImageLimits.default`, which is what
        /// a manifest's `"limit"` errors are measured against.
        public var limits: ImageLimits = .default
        /// The seed of every random choice (chunk lengths, prefix offsets), so that a failure
        /// reproduces. Default: 0x4E554B45.
        public var seed: UInt64 = 0x4E55_4B45
        /// Files up to this size are truncated at every length; larger ones at every
        /// ``truncationStride``-th length (plus the first and last 64). Default: 64 KiB.
        public var exhaustiveTruncationLimit: Int = 64 * 1024
        /// The distance between prefix lengths for files above ``exhaustiveTruncationLimit``.
        /// Default: 61.
        public var truncationStride: Int = 61
        /// How many corrupted variants of each valid fixture the corruption check decodes.
        /// Default: 64.
        public var corruptionCount: Int = 64
        /// The feeding runs of the progressive check, each on a fresh decoder instance.
        /// Default: byte by byte, two random-chunk runs and the whole file.
        public var progressiveFeedings: [ProgressiveFeeding]?
        /// After each chunk, call `ImageDecoding.decodePartiallyDownloadedData(_:)` again
        /// with the same data until it returns `nil`, as `ImageDecodingSession` does, so a
        /// decoder that returns one preview per call (of the next pending scan) shows them all.
        /// When `false`, one call per chunk, as Nuke's pipeline makes. Default: `true`.
        public var drainsPreviews: Bool = true
        /// The most previews one chunk may give when ``drainsPreviews`` is set; a decoder
        /// that returns more keeps returning previews without new data, a failure. Default: 1,000.
        public var maximumPreviewsPerChunk: Int = 1_000
        /// Files larger than this skip ``ProgressiveFeeding/byteByByte`` (it makes one
        /// partial call per byte). Default: 16 KiB.
        public var byteByByteLimit: Int = 16 * 1024
        /// How many tasks decode at once in the concurrency check. Default: 4.
        public var concurrencyWidth: Int = 4
        /// How many times each task decodes every fixture in the concurrency check. Default: 2.
        public var concurrencyRepetitions: Int = 2
        /// The encoder's options in the round trip. Default: quality 0.9, the rest as
        /// `ImageEncodingOptions` defaults.
        public var encodingOptions = ImageEncodingOptions(quality: 0.9)
        /// The round-trip tolerance for lossy fixtures (`lossless` not `true` in the
        /// manifest). Lossless ones must round-trip exactly. Default: PSNR ≥ 30 dB.
        public var lossyRoundTripTolerance: ImageComparison.Tolerance = .minimumPSNR(30)
        /// Also round-trip 16-bit decodes of fixtures with a 16-bit reference, when the codec
        /// has `ImageCodecCapabilities.highBitDepth` and an encoder. Default: `true`.
        public var roundTripsHighBitDepth: Bool = true
        /// The round trip also requires the EXIF orientation to survive. Default: `false`
        /// (not every format can carry it).
        public var roundTripPreservesOrientation: Bool = false
        /// The limits check also requires `ImageLimits.maxDecodedBytes` one byte below the
        /// decoded size to throw. Default: `true`.
        public var checksDecodedBytesLimit: Bool = true
        /// A codec with `ImageCodecCapabilities.progressive` must create a decoder for
        /// partial data of every valid fixture. Default: `true`.
        public var requiresProgressiveDecoder: Bool = true

        public init() {}

        /// The feeding runs the progressive check uses.
        public var resolvedFeedings: [ProgressiveFeeding] {
            progressiveFeedings ?? [.byteByByte, .randomChunks(seed: seed), .randomChunks(seed: seed &+ 1), .whole]
        }
    }
}
