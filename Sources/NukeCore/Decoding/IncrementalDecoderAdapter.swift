#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Gives an ``IncrementalImageDecoding`` Nuke's ``ImageDecoding`` face.
///
/// Nuke calls ``decodePartiallyDownloadedData(_:)`` with ever longer prefixes of the same data
/// and then ``decode(_:)`` with all of it. The adapter remembers how many bytes the decoder has
/// seen and pushes only the new ones, so a progressive download stays linear in the file size.
/// When the data does not extend what was pushed (shorter, or its first or last pushed bytes
/// differ), or extends data a ``decode(_:)`` already declared complete, it starts a new decoder.
/// A failure during a partial decode ends it: the partial call returns `nil` and the following
/// ``decode(_:)`` of the same data throws that error.
///
/// Plugins build their public Nuke-style decoder type on it:
///
/// ```swift
/// public final class MyFormat: ImageDecoderRegistering {
///     private let adapter: IncrementalDecoderAdapter
///     public init?(data: Data, context: ImageDecodingContext) {
///         guard MyFormat.isMine(data) else { return nil }
///         adapter = IncrementalDecoderAdapter { MyIncrementalDecoder(context: context) }
///     }
///     public func decode(_ data: Data) throws -> ImageContainer { try adapter.decode(data) }
///     public func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
///         adapter.decodePartiallyDownloadedData(data)
///     }
/// }
/// ```
public final class IncrementalDecoderAdapter: ImageDecoding, Sendable {
    /// Makes a fresh decoder; called for the first call and after the data changed. Returns
    /// `nil` when the data is not the decoder's format (the decode then fails with `.noCodec`).
    public typealias Factory = @Sendable () -> (any IncrementalImageDecoding)?

    private struct State {
        var decoder: (any IncrementalImageDecoding)?
        /// How many bytes of the data the decoder was given.
        var pushedCount = 0
        /// The first and last pushed bytes, to tell whether new data extends the old.
        var head: [UInt8] = []
        var tail: [UInt8] = []
        var failure: (any Error)?
        var final: ImageContainer?
        /// ``decode(_:)`` declared the end of the input: longer data needs a new decoder.
        var isFinished = false
    }

    private let make: Factory
    // The decoder is used only under this lock: calls on one adapter never overlap.
    private let state = Mutex(State())

    /// - Parameter make: Makes the incremental decoder for one decode.
    public init(_ make: @escaping Factory) {
        self.make = make
    }

    /// Decodes the complete image, pushing only the bytes earlier partial calls did not.
    ///
    /// - Throws: The decoder's error, or the one a partial decode of the same data met.
    public func decode(_ data: Data) throws -> ImageContainer {
        try state.withLock { state in
            Self.prepare(&state, for: data, make: make)
            if let final = state.final { return final }
            if let failure = state.failure { throw failure }
            state.decoder?.finish()
            state.isFinished = true
            do {
                while true {
                    switch try state.decoder?.next() {
                    case .final(let container)?:
                        state.final = container
                        state.decoder = nil
                        return container
                    case nil:
                        throw ImageCodecError(.noCodec, stage: .registry, format: ImageType(data),
                                              message: "the decoder does not accept this data")
                    case .needsMoreData?:
                        throw ImageCodecError(.internalFailure, stage: .decoding, format: ImageType(data),
                                              message: "the decoder asked for more data after the end of the input")
                    case .header?, .preview?:
                        continue
                    }
                }
            } catch {
                state.failure = error
                state.decoder = nil
                throw error
            }
        }
    }

    /// Returns the next preview the new bytes allow, or `nil`.
    ///
    /// One preview per call: when a chunk completed several scans or frames, calling again with
    /// the same data returns the next.
    public func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
        state.withLock { state -> ImageContainer? in
            Self.prepare(&state, for: data, make: make)
            guard state.final == nil, state.failure == nil else { return nil }
            do {
                while true {
                    switch try state.decoder?.next() {
                    case .preview(let preview)?: return preview
                    case .header?: continue
                    case .final(let container)?:
                        state.final = container
                        state.decoder = nil
                        return nil
                    case .needsMoreData?, nil: return nil
                    }
                }
            } catch {
                state.failure = error
                state.decoder = nil
                return nil
            }
        }
    }

    /// Pushes the bytes of `data` the decoder has not seen, or starts over when `data` does not
    /// extend them.
    private static func prepare(_ state: inout State, for data: Data, make: Factory) {
        if state.pushedCount > 0, !extends(state, data) || (state.isFinished && data.count > state.pushedCount) {
            state = State()
        }
        if state.decoder == nil, state.final == nil, state.failure == nil, state.pushedCount == 0 {
            state.decoder = make()
        }
        guard data.count > state.pushedCount, state.decoder != nil else { return }
        let start = data.startIndex + state.pushedCount
        state.decoder?.push(data[start...])
        state.pushedCount = data.count
        if state.head.count < 16 { state.head = Array(data.prefix(16)) }
        state.tail = Array(data.suffix(16))
    }

    /// `true` when `data` starts with the bytes pushed so far (checked at both ends).
    private static func extends(_ state: State, _ data: Data) -> Bool {
        guard data.count >= state.pushedCount else { return false }
        let start = data.startIndex
        return data[start..<(start + state.head.count)].elementsEqual(state.head)
            && data[(start + state.pushedCount - state.tail.count)..<(start + state.pushedCount)].elementsEqual(state.tail)
    }
}

/// Drives a Nuke-style ``ImageDecoding`` through the incremental contract, for the registry and
/// the session: the driver keeps the data, asks for a preview when new bytes arrived (and again
/// while the decoder's scan number grows), and decodes it all after ``finish()``.
///
/// What such a decoder does not do itself, the driver does for it: a cancelled decode ends before
/// the decoder is called (and its image is not returned), and every image it returns is held to
/// the decode's limits (dimensions, pixel count, frames, bytes) and finished to the target size
/// (``ImageContainer/finishDecodeToSize(for:originalSize:)``): a closure registered with
/// ``ImageDecoderRegistry/register(for:priority:name:header:_:)`` gets the caller's limits,
/// cancellation and decode to size without writing them.
struct ImageDecodingDriver: IncrementalImageDecoding {
    let decoder: any ImageDecoding
    private let context: ImageDecodingContext
    private var data = Data()
    private var isFinished = false
    private var lastPartialCount = 0
    private var mayHaveMore = false
    private var lastScan = 0

    init(_ decoder: any ImageDecoding, context: ImageDecodingContext) {
        self.decoder = decoder
        self.context = context
    }

    mutating func push(_ bytes: Data) {
        if data.isEmpty { data = bytes } else { data.append(bytes) }
    }

    mutating func finish() {
        isFinished = true
    }

    mutating func next() throws -> ImageDecodingEvent {
        try context.checkCancellation()
        if isFinished { return .final(try checked(decoder.decode(data))) }
        guard data.count > lastPartialCount || mayHaveMore else { return .needsMoreData }
        lastPartialCount = data.count
        mayHaveMore = false
        guard let preview = decoder.decodePartiallyDownloadedData(data) else { return .needsMoreData }
        if let scan = preview.userInfo[.scanNumberKey] as? Int, scan > lastScan {
            lastScan = scan
            mayHaveMore = true
        }
        return .preview(try checked(preview))
    }

    /// The decoder's image, once the decode was not cancelled meanwhile and the image is within
    /// the limits, at the target size.
    private func checked(_ container: ImageContainer) throws(ImageCodecError) -> ImageContainer {
        try context.checkCancellation()
        try context.checkLimits(of: container)
        var container = container
        container.finishDecodeToSize(for: context)
        return container
    }
}
