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

    /// An entry, linked from newer to older. Reached only under ``state``'s lock, which is what
    /// makes the non-Sendable class safe to keep in the cache's `Mutex`.
    private final class Node {
        let key: String
        var container: ImageContainer
        var cost: Int
        var expires: ContinuousClock.Instant?
        /// The list's links; `nodes` owns every node, and a node leaves the list before it leaves `nodes`.
        unowned(unsafe) var older: Node?
        unowned(unsafe) var newer: Node?

        init(key: String, container: ImageContainer, cost: Int, expires: ContinuousClock.Instant?) {
            self.key = key
            self.container = container
            self.cost = cost
            self.expires = expires
        }
    }

    private struct State {
        var nodes: [String: Node] = [:]
        unowned(unsafe) var newest: Node?
        unowned(unsafe) var oldest: Node?
        var totalCost = 0
        var limits: Limits
    }

    private let state: Mutex<State>
    private let clock = ContinuousClock()

    /// The cache `ImagePipeline.Configuration()` uses unless told otherwise (Nuke's `ImageCache.shared`).
    public static let shared = ImageCache()

    /// A cache with `limits`.
    public init(limits: Limits = Limits()) {
        state = Mutex(State(limits: limits))
    }

    /// The limits.
    public var limits: Limits {
        get { state.withLock { $0.limits } }
        set { state.withLock { $0.limits = newValue; Self.trim(&$0) } }
    }

    /// Nuke's names for the limits, one at a time.
    public var costLimit: Int {
        get { limits.costLimit }
        set { limits.costLimit = newValue }
    }
    /// Images kept at most.
    public var countLimit: Int {
        get { limits.countLimit }
        set { limits.countLimit = newValue }
    }
    /// An image costing more than this fraction of ``costLimit`` is not stored.
    public var entryCostLimit: Double {
        get { limits.entryCostLimit }
        set { limits.entryCostLimit = newValue }
    }
    /// How long an entry lives; `nil` for no limit.
    public var ttl: Duration? {
        get { limits.ttl }
        set { limits.ttl = newValue }
    }

    /// Bytes of pixels held.
    public var totalCost: Int { state.withLock { $0.totalCost } }
    /// Images held.
    public var totalCount: Int { state.withLock { $0.nodes.count } }

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
            guard let node = state.nodes[key] else { return nil }
            if let expires = node.expires, expires < clock.now {
                Self.remove(node, &state)
                return nil
            }
            if state.newest !== node {
                Self.unlink(node, &state)
                Self.link(node, &state)
            }
            return node.container
        }
    }

    /// Stores `container` under `key` at its cost (``cost(of:)``), then trims to the limits.
    public func store(_ container: ImageContainer, forKey key: String) {
        let cost = Self.cost(of: container)
        state.withLock { state in
            guard Double(cost) <= Double(state.limits.costLimit) * state.limits.entryCostLimit else { return }
            if let old = state.nodes[key] { Self.remove(old, &state) }
            let node = Node(key: key, container: container, cost: cost, expires: state.limits.ttl.map { clock.now + $0 })
            state.nodes[key] = node
            state.totalCost += cost
            Self.link(node, &state)
            Self.trim(&state)
        }
    }

    /// Removes the image under `key`.
    public func removeValue(forKey key: String) {
        state.withLock { state in
            if let node = state.nodes[key] { Self.remove(node, &state) }
        }
    }

    /// Removes every image.
    public func removeAll() {
        state.withLock { state in
            state.newest = nil
            state.oldest = nil
            state.nodes.removeAll()
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

    /// Makes `node` the newest.
    private static func link(_ node: Node, _ state: inout State) {
        node.older = state.newest
        node.newer = nil
        state.newest?.newer = node
        state.newest = node
        if state.oldest == nil { state.oldest = node }
    }

    private static func unlink(_ node: Node, _ state: inout State) {
        if let older = node.older { older.newer = node.newer } else { state.oldest = node.newer }
        if let newer = node.newer { newer.older = node.older } else { state.newest = node.older }
        node.older = nil
        node.newer = nil
    }

    private static func remove(_ node: Node, _ state: inout State) {
        unlink(node, &state)
        state.totalCost -= node.cost
        state.nodes[node.key] = nil
    }

    private static func trim(_ state: inout State) {
        while state.totalCost > state.limits.costLimit || state.nodes.count > state.limits.countLimit, let oldest = state.oldest {
            remove(oldest, &state)
        }
    }
}

/// The memory the process may use.
public enum MemoryLimit {
    /// Its container's limit (cgroup v2 `memory.max`, or v1 `memory.limit_in_bytes`) when it
    /// runs under one, else the machine's physical memory.
    public static var current: Int64 {
        let physical = Int64(clamping: ProcessInfo.processInfo.physicalMemory)
        return cgroupLimit(root: "/sys/fs/cgroup", selfCgroup: try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8))
            .map { min(Int64($0), physical) } ?? physical
    }

    /// The limit the cgroup files under `root` set for the cgroup `/proc/self/cgroup` names, or
    /// `nil` when there is none ("max", or v1's page-rounded "no limit").
    static func cgroupLimit(root: String, selfCgroup: String?) -> Int? {
        var candidates: [String] = []
        for line in (selfCgroup ?? "").split(separator: "\n") {
            // v2: `0::/path`; v1: `N:memory:/path`.
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = String(fields[2])
            if fields[0] == "0", fields[1].isEmpty {
                candidates += [root + path + "/memory.max", root + "/memory.max"]
            } else if fields[1].split(separator: ",").contains("memory") {
                candidates += [root + "/memory" + path + "/memory.limit_in_bytes", root + "/memory/memory.limit_in_bytes"]
            }
        }
        for file in candidates {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if value == "max" { return nil }
            // cgroup v1 says "no limit" with the largest page-aligned 64-bit value.
            if let bytes = Int(value), bytes > 0, bytes < (1 << 60) { return bytes }
            return nil
        }
        return nil
    }
}
