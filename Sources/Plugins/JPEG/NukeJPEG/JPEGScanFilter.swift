#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NukeCore

/// Only the bytes a decode at 1/8 can show: drops the scans of a progressive JPEG whose
/// coefficients the decode never reads, and ends the data once every coefficient it does read
/// is complete.
///
/// At a DCT scale of 1/8 libjpeg gives each component of the largest sampling factors a 1×1
/// inverse DCT, which reads only the DC coefficient; the AC scans of such a component (in a
/// 4:2:0 photo, the luma's: most of the file) are never looked at. A component with smaller
/// sampling factors (4:2:0 chroma) gets a 2×2 inverse DCT, which reads AC coefficients of every
/// row and column, so its scans are kept whole. The filter drops the others' AC scans without
/// entropy-decoding them (a byte scan for the next marker) and, once the kept scans have given
/// every coefficient the decode reads its last bit (the DC refinement included), ends the
/// data with an `EOI`: what follows cannot change the image.
///
/// The decode of the filtered data, with block smoothing off, is exact: equal to the decode
/// of the whole file at 1/8 for a file whose scans complete every coefficient (libjpeg's,
/// mozjpeg's and Photoshop's scripts do). Damage in a dropped scan is not seen.
///
/// A streaming filter: bytes in, bytes out, in any pieces; it holds back at most an
/// incomplete marker segment (64 KiB). Anything it does not understand (not progressive
/// Huffman, a malformed segment) from then on passes unchanged, for libjpeg to judge.
struct JPEGScanFilter {
    /// A start-of-frame header.
    struct Frame {
        var precision: Int
        var width: Int
        var height: Int
        var components: [(id: UInt8, h: Int, v: Int)]
    }

    private enum State {
        case start
        case markers
        /// Entropy-coded data of a scan that is kept or dropped.
        case entropy(keep: Bool)
        /// Everything from here on goes through unchanged.
        case passthrough
        /// The data was ended with an `EOI`: the rest is dropped.
        case ended
    }

    /// Decides, from the frame header, which components need only their DC coefficient;
    /// `nil` or an empty set: nothing is filtered.
    private let decide: (Frame) -> Set<UInt8>?
    private let maxScans: Int
    private var state = State.start
    private var pending: [UInt8] = []
    /// The components read only for their DC coefficient, once the frame header decided.
    private(set) var dcOnly: Set<UInt8> = []
    private var components: [UInt8] = []
    /// Per component, per coefficient (zig-zag order): the point transform (`Al`) of the
    /// precision known so far, -1 before any scan sent it.
    private var precision: [UInt8: [Int8]] = [:]
    /// The kept scan whose data is passing: its components and spectral band, its `Al`.
    private var scan: (components: [UInt8], band: ClosedRange<Int>, al: Int8)?
    /// Every scan seen, dropped or kept.
    private(set) var scanCount = 0

    init(maxScans: Int, decide: @escaping (Frame) -> Set<UInt8>?) {
        self.maxScans = maxScans
        self.decide = decide
    }

    /// Whether scans are being dropped (the frame header asked for it).
    var isFiltering: Bool { !dcOnly.isEmpty }

    /// Whether the filter ended the data early: everything the decode reads has arrived.
    var hasEnded: Bool {
        if case .ended = state { return true }
        return false
    }

    /// The bytes of `chunk` to give libjpeg, in order after the ones returned before.
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` `.limitExceeded` when the file has more scans than `maxScanCount` (dropped ones count).
    mutating func feed(_ chunk: Data) throws(ImageCodecError) -> Data {
        switch state {
        case .passthrough where pending.isEmpty: return chunk
        case .ended: return Data()
        default: break
        }
        var input = pending
        pending = []
        input.append(contentsOf: chunk)
        var output = Data()
        output.reserveCapacity(input.count)
        let result = input.withUnsafeBytes { raw in
            Result { () throws(ImageCodecError) in try run(raw, into: &output) }
        }
        try result.get()
        return output
    }

    /// The held-back bytes, when no more input will come (an incomplete segment: libjpeg reports it).
    mutating func flush() -> Data {
        defer { pending = [] }
        if case .ended = state { return Data() }
        return Data(pending)
    }

    private mutating func run(_ b: UnsafeRawBufferPointer, into out: inout Data) throws(ImageCodecError) {
        let n = b.count
        var i = 0
        func emit(_ range: Range<Int>) {
            guard !range.isEmpty else { return }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[range]))
        }
        loop: while i < n {
            switch state {
            case .ended:
                return
            case .passthrough:
                emit(i..<n)
                return
            case .start:
                guard n - i >= 2 else { break loop }
                state = b[i] == 0xFF && b[i + 1] == 0xD8 ? .markers : .passthrough
                if case .markers = state {
                    emit(i..<i + 2)
                    i += 2
                }
            case .markers:
                guard b[i] == 0xFF else {
                    state = .passthrough
                    continue
                }
                var m = i + 1
                while m < n, b[m] == 0xFF { m += 1 }
                guard m < n else { break loop }
                let marker = b[m]
                switch marker {
                case 0x01, 0xD0...0xD8:
                    emit(i..<m + 1)
                    i = m + 1
                    continue loop
                case 0xD9:
                    state = .passthrough
                    continue loop
                default:
                    break
                }
                guard m + 2 < n else { break loop }
                let length = Int(b[m + 1]) << 8 | Int(b[m + 2])
                guard length >= 2 else {
                    state = .passthrough
                    continue loop
                }
                let end = m + 1 + length
                guard end <= n else { break loop }
                let segment = UnsafeRawBufferPointer(rebasing: b[(m + 3)..<end])
                if JPEGHeaderParser.isStartOfFrame(Int(marker)) {
                    emit(i..<end)
                    i = end
                    startFrame(marker: marker, segment)
                } else if marker == 0xDA {
                    scanCount += 1
                    if scanCount > maxScans {
                        throw JPEGLibrary.error(.limitExceeded, .decoding, "Scan number \(scanCount) exceeds maximum scans (\(maxScans))")
                    }
                    guard let keep = startScan(segment) else {
                        state = .passthrough
                        continue loop
                    }
                    if keep { emit(i..<end) }
                    i = end
                    state = .entropy(keep: keep)
                } else {
                    emit(i..<end)
                    i = end
                }
            case .entropy(let keep):
                // Runs to a marker other than a stuffed zero (FF 00) or a restart (FF D0–D7).
                var j = i
                var marker = n
                while j < n {
                    guard let found = memchr(b.baseAddress! + j, 0xFF, n - j) else { j = n; break }
                    j = b.baseAddress!.distance(to: UnsafeRawPointer(found))
                    guard j + 1 < n else { break }
                    let next = b[j + 1]
                    if next == 0x00 || (0xD0...0xD7).contains(next) {
                        j += 2
                    } else if next == 0xFF {
                        j += 1
                    } else {
                        marker = j
                        break
                    }
                }
                // A lone FF at the end may start a marker: it waits for the next byte.
                let runEnd = marker < n ? marker : min(j, n)
                if keep { emit(i..<runEnd) }
                i = runEnd
                guard marker < n else { break loop }
                endScan(keep: keep)
                if case .ended = state { out.append(contentsOf: [0xFF, 0xD9]) }
            }
        }
        if i < n { pending = Array(UnsafeRawBufferPointer(rebasing: b[i..<n])) }
    }

    /// Reads the frame header and asks which components need only their DC coefficient.
    private mutating func startFrame(marker: UInt8, _ s: UnsafeRawBufferPointer) {
        guard components.isEmpty, s.count >= 6 else {
            state = .passthrough
            return
        }
        let count = Int(s[5])
        guard count > 0, s.count >= 6 + 3 * count else {
            state = .passthrough
            return
        }
        var frame = Frame(precision: Int(s[0]), width: Int(s[3]) << 8 | Int(s[4]),
                          height: Int(s[1]) << 8 | Int(s[2]), components: [])
        for c in 0..<count {
            let at = 6 + 3 * c
            frame.components.append((id: s[at], h: Int(s[at + 1] >> 4), v: Int(s[at + 1] & 0x0F)))
        }
        components = frame.components.map(\.id)
        // Only progressive Huffman: arithmetic-coded data is gated by scan (JPEGSuspendingDecode).
        guard marker == 0xC2, Set(components).count == count, let dcOnly = decide(frame), !dcOnly.isEmpty else {
            state = .passthrough
            return
        }
        self.dcOnly = dcOnly
        for id in components { precision[id] = Array(repeating: -1, count: 64) }
    }

    /// Reads a scan header: `true` to keep the scan, `false` to drop it, `nil` when the header
    /// is not one to filter by (libjpeg judges it).
    private mutating func startScan(_ s: UnsafeRawBufferPointer) -> Bool? {
        guard isFiltering, s.count >= 1 else { return nil }
        let count = Int(s[0])
        guard count > 0, s.count >= 1 + 2 * count + 3 else { return nil }
        var ids: [UInt8] = []
        for c in 0..<count {
            let id = s[1 + 2 * c]
            guard precision[id] != nil else { return nil }
            ids.append(id)
        }
        let ss = Int(s[1 + 2 * count]), se = Int(s[2 + 2 * count]), al = Int8(s[3 + 2 * count] & 0x0F)
        guard ss <= se, se <= 63 else { return nil }
        // An AC scan (one component in a progressive file) of a component read for DC only.
        if ss > 0, ids.allSatisfy(dcOnly.contains) {
            scan = nil
            return false
        }
        scan = (ids, ss...se, al)
        return true
    }

    /// A kept scan's data has all arrived: its band is known to `Al`; once every coefficient
    /// the decode reads is exact, the data ends.
    private mutating func endScan(keep: Bool) {
        state = .markers
        guard keep, let scan else { return }
        self.scan = nil
        for id in scan.components {
            for k in scan.band { precision[id]?[k] = scan.al }
        }
        let complete = components.allSatisfy { id in
            guard let bits = precision[id] else { return false }
            return dcOnly.contains(id) ? bits[0] == 0 : bits.allSatisfy { $0 == 0 }
        }
        if complete { state = .ended }
    }
}

extension JPEGScanFilter {
    /// The filter for a decode with `context`: it drops scans when the core's plan asks for a
    /// DCT scale of 1/8 (libjpeg's output is `ceil(size / 8)`).
    init(context: ImageDecodingContext) {
        self.init(maxScans: max(context.limits.maxScanCount, 0)) { frame in
            Self.dcOnlyComponents(of: frame, context: context)
        }
    }

    /// The components a decode at 1/8 reads only for their DC coefficient: those libjpeg's
    /// `jpeg_calc_output_dimensions` leaves at a 1×1 inverse DCT (it doubles a component's
    /// DCT size while the sampling ratio allows it, to spare upsampling).
    static func dcOnlyComponents(of frame: Frame, context: ImageDecodingContext) -> Set<UInt8>? {
        guard frame.precision == 8, frame.width > 0, frame.height > 0,
              context.nativeReduction(of: ImageSize(width: frame.width, height: frame.height), among: JPEGPlugin.nativeReductions)?.option == 1
        else { return nil }
        let maxH = frame.components.map(\.h).max() ?? 0
        let maxV = frame.components.map(\.v).max() ?? 0
        guard frame.components.allSatisfy({ (1...4).contains($0.h) && (1...4).contains($0.v) }) else { return nil }
        return Set(frame.components.filter { c in
            // The first doubling needs maxH % (2h) == 0 and maxV % (2v) == 0.
            !(maxH % (2 * c.h) == 0 && maxV % (2 * c.v) == 0)
        }.map(\.id))
    }
}

extension JPEGScanFilter {
    /// Complete data with the scans a decode with `context` never reads dropped, and the filter
    /// that dropped them; `nil` when nothing would be (not progressive, or not a decode at 1/8).
    static func filtered(_ data: Data, context: ImageDecodingContext) throws(ImageCodecError) -> (data: Data, filter: JPEGScanFilter)? {
        guard context.targetSize != nil, case .parsed(let header) = JPEGHeaderParser.parse(data), header.isProgressive,
              context.nativeReduction(of: header.size, among: JPEGPlugin.nativeReductions)?.option == 1 else { return nil }
        var filter = JPEGScanFilter(context: context)
        var filtered = try filter.feed(data)
        filtered.append(filter.flush())
        guard filter.isFiltering else { return nil }
        return (filtered, filter)
    }

    /// Checks that libjpeg reads only the DC coefficient of exactly the components whose AC
    /// scans were dropped, and turns block smoothing off (it would invent the dropped
    /// coefficients). Called after the plan, before the decompression starts.
    ///
    /// - Throws: `.internalFailure` when libjpeg chose otherwise (the filter's rule is wrong).
    func prepare(_ decompressor: JPEGDecompressor, scale: Int) throws(ImageCodecError) {
        guard isFiltering else { return }
        for id in components {
            let dcOnlyHere = scale == 1 && decompressor.dctSize(ofComponent: id) == 1
            guard dcOnlyHere == dcOnly.contains(id) else {
                throw JPEGLibrary.error(.internalFailure, .decoding, "the scans dropped for a decode at 1/8 do not match libjpeg's inverse DCT sizes (component \(id) at scale \(scale)/8)")
            }
        }
        decompressor.setBlockSmoothing(false)
    }
}
