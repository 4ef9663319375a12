import Synchronization

/// A handle to one registration in a decoder or encoder registry, for `unregister(_:)`.
public struct ImageCodecRegistration: Hashable, Sendable {
    let id: UInt64
}

/// The registrations one registry keeps, in the order they are tried: priority, highest first,
/// then the newest registration first among equals. One implementation serves
/// ``ImageDecoderRegistry`` and ``ImageEncoderRegistry``.
///
/// Thread-safe: everything is behind one `Mutex`, and no user code runs while it is held
/// (readers take a snapshot of the entries and use it outside the lock).
final class CodecRegistrations<Factory: Sendable>: Sendable {
    struct Entry: Sendable {
        var registration: ImageCodecRegistration
        var priority: Int
        /// When set, the entry is only offered data of this format (encoders: the format it writes).
        var type: ImageType?
        var info: ImageCodecInfo
        var factory: Factory
    }

    private struct State: Sendable {
        var entries: [Entry] = []
        var nextID: UInt64 = 1
    }

    private let state = Mutex(State())

    init() {}

    /// Adds an entry before the first one of equal or lower priority (newest first among equals).
    func add(priority: Int, type: ImageType?, info: ImageCodecInfo, factory: Factory) -> ImageCodecRegistration {
        state.withLock { state in
            let registration = ImageCodecRegistration(id: state.nextID)
            state.nextID += 1
            let entry = Entry(registration: registration, priority: priority, type: type, info: info, factory: factory)
            let index = state.entries.firstIndex { $0.priority <= priority } ?? state.entries.endIndex
            state.entries.insert(entry, at: index)
            return registration
        }
    }

    /// Removes a registration; removing one twice does nothing.
    func remove(_ registration: ImageCodecRegistration) {
        state.withLock { $0.entries.removeAll { $0.registration == registration } }
    }

    func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }

    /// A snapshot of the entries, in order.
    var entries: [Entry] {
        state.withLock { $0.entries }
    }

    /// The entries offered data of `type`: those registered for it, and those for any format
    /// (lazily: a dispatch that takes the first allocates nothing).
    func entries(for type: ImageType?) -> LazyFilterSequence<[Entry]> {
        entries.lazy.filter { $0.type == nil || $0.type == type }
    }

    /// The formats with at least one entry, in order of first appearance.
    var formats: [ImageType] {
        var seen = Set<ImageType>()
        return entries.compactMap(\.type).filter { $0.rawValue != "*" && seen.insert($0).inserted }
    }
}
