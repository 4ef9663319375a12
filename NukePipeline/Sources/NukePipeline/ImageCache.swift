import Foundation
import NukeCore
import Synchronization

/// Decoded images in memory, least recently used first out: Nuke's `ImageCache`. Bounded by a
/// cost (bytes of pixels), a count and an age (``entryCostLimit`` keeps one huge image from
/// taking everything). Thread-safe; a lookup is a dictionary read and a list splice under a lock.
public final class ImageCache: Sendable {
    /// Limits, readable and changeable while the cache is used; lowering one trims at once.
    public struct Limits: Sendable, Hashable {
        /// Bytes of pixels kept.
        public var costLimit: Int
        /// Images kept.
        public var countLimit: Int
        /// An image costing more than this fraction of ``costLimit`` is not stored.
        public var entryCostLimit: Double
        /// How long an entry lives; `nil` for no limit.
        public var ttl: Duration?

        /// Limits; by default the cost limit is ``ImageCache/defaultCostLimit()``.
        public init(costLimit: Int = ImageCache.defaultCostLimit(), countLimit: Int = .max, entryCostLimit: Double = 0.1, ttl: Duration? = nil) {
            self.costLimit = costLimit
            self.countLimit = countLimit
            self.entryCostLimit = entryCostLimit
            self.ttl = ttl
        }
    }

    private struct Entry {
        var container: ImageContainer
        var cost: Int
        var expires: ContinuousClock.Instant?
        var older: String?
        var newer: String?
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var newest: String?
        var oldest: String?
        var totalCost = 0
        var limits: Limits
    }

    private let state: Mutex<State>
    private let clock = ContinuousClock()

    /// A cache with `limits`.
    public init(limits: Limits = Limits()) {
        state = Mutex(State(limits: limits))
    }

    /// The limits.
    public var limits: Limits {
        get { state.withLock { $0.limits } }
        set { state.withLock { $0.limits = newValue; Self.trim(&$0) } }
    }

    /// Bytes of pixels held.
    public var totalCost: Int { state.withLock { $0.totalCost } }
    /// Images held.
    public var totalCount: Int { state.withLock { $0.entries.count } }

    /// The image stored under `key`, made the most recently used; `nil` when absent or expired.
    public subscript(key: String) -> ImageContainer? {
        get { value(forKey: key) }
        set {
            if let newValue { store(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// The image stored under `key`, made the most recently used.
    public func value(forKey key: String) -> ImageContainer? {
        state.withLock { state in
            guard let entry = state.entries[key] else { return nil }
            if let expires = entry.expires, expires < clock.now {
                Self.unlink(key, &state)
                return nil
            }
            Self.unlink(key, &state)
            Self.link(key, entry, &state)
            return entry.container
        }
    }

    /// Stores `container` under `key` at its cost (``cost(of:)``), then trims to the limits.
    public func store(_ container: ImageContainer, forKey key: String) {
        let cost = Self.cost(of: container)
        state.withLock { state in
            guard Double(cost) <= Double(state.limits.costLimit) * state.limits.entryCostLimit else { return }
            if state.entries[key] != nil { Self.unlink(key, &state) }
            let expires = state.limits.ttl.map { clock.now + $0 }
            Self.link(key, Entry(container: container, cost: cost, expires: expires), &state)
            Self.trim(&state)
        }
    }

    /// Removes the image under `key`.
    public func removeValue(forKey key: String) {
        state.withLock { state in
            if state.entries[key] != nil { Self.unlink(key, &state) }
        }
    }

    /// Removes every image.
    public func removeAll() {
        state.withLock { state in
            state.entries.removeAll()
            state.newest = nil
            state.oldest = nil
            state.totalCost = 0
        }
    }

    /// What an image costs: the bytes of its frames' pixels, and of the encoded data it keeps.
    public static func cost(of container: ImageContainer) -> Int {
        container.image.frames.reduce(0) { $0 + $1.bitmap.byteCount } + (container.data?.count ?? 0)
    }

    /// A fifth of the memory the process may use: its cgroup's limit in a container, else the
    /// machine's physical memory (``MemoryLimit/current``).
    public static func defaultCostLimit() -> Int {
        Int(min(MemoryLimit.current / 5, Int64(Int.max)))
    }

    // MARK: - The list

    private static func link(_ key: String, _ entry: Entry, _ state: inout State) {
        var entry = entry
        entry.older = state.newest
        entry.newer = nil
        if let newest = state.newest { state.entries[newest]!.newer = key }
        state.newest = key
        if state.oldest == nil { state.oldest = key }
        state.totalCost += entry.cost
        state.entries[key] = entry
    }

    private static func unlink(_ key: String, _ state: inout State) {
        guard let entry = state.entries.removeValue(forKey: key) else { return }
        if let older = entry.older { state.entries[older]!.newer = entry.newer } else { state.oldest = entry.newer }
        if let newer = entry.newer { state.entries[newer]!.older = entry.older } else { state.newest = entry.older }
        state.totalCost -= entry.cost
    }

    private static func trim(_ state: inout State) {
        while state.totalCost > state.limits.costLimit || state.entries.count > state.limits.countLimit, let oldest = state.oldest {
            unlink(oldest, &state)
        }
    }
}

/// The memory the process may use.
public enum MemoryLimit {
    /// The cgroup's limit when the process runs under one (v2 `memory.max`, v1
    /// `memory.limit_in_bytes`), else the machine's physical memory.
    public static var current: Int64 {
        let physical = Int64(ProcessInfo.processInfo.physicalMemory)
        return min(physical, cgroupLimit() ?? physical)
    }

    static func cgroupLimit() -> Int64? {
        // cgroup v2: /proc/self/cgroup's "0::/path" under /sys/fs/cgroup.
        if let membership = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
           let line = membership.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) {
            let path = String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces)
            for folder in [path, "/"] {
                if let value = try? String(contentsOfFile: "/sys/fs/cgroup\(folder == "/" ? "" : folder)/memory.max", encoding: .utf8),
                   let limit = Int64(value.trimmingCharacters(in: .whitespacesAndNewlines)) {
                    return limit
                }
            }
        }
        if let value = try? String(contentsOfFile: "/sys/fs/cgroup/memory/memory.limit_in_bytes", encoding: .utf8),
           let limit = Int64(value.trimmingCharacters(in: .whitespacesAndNewlines)), limit < (1 << 60) {
            return limit
        }
        return nil
    }
}
