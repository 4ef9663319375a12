import Synchronization
import Testing
@testable import NukeCore
@testable import NukePixels

struct PixelBufferPoolTests {
    static let mebibyte = 1 << 20

    /// The buffers in use, shared by the tasks of the concurrency test.
    final class LiveSet: Sendable {
        private let addresses = Mutex<Set<UInt>>([])
        /// Returns `false` when `address` is already in use.
        func insert(_ address: UInt) -> Bool { addresses.withLock { $0.insert(address).inserted } }
        func remove(_ address: UInt) { addresses.withLock { _ = $0.remove(address) } }
    }

    static func address(_ storage: PixelStorage) -> UInt {
        UInt(bitPattern: storage.baseAddress)
    }

    @Test(arguments: [
        (0, 4096), (1, 4096), (4096, 4096), (4097, 8192), (300_000, 524_288), (1 << 20, 1 << 20),
        ((1 << 20) + 1, (1 << 20) + 65_536), (82_000_000, 82_051_072),
    ])
    func roundsRequestsToSizeClasses(_ byteCount: Int, capacity: Int) {
        #expect(PixelBufferPool.capacity(forByteCount: byteCount) == capacity)
    }

    @Test func reusesABufferAfterItsLastUserReleasesIt() {
        let pool = PixelBufferPool()
        var storage: PixelStorage? = pool.allocate(byteCount: 1000)
        let first = storage.map(Self.address)
        #expect(pool.statistics == .init(hits: 0, misses: 1, idleBytes: 0, idleBufferCount: 0))
        storage = nil
        #expect(pool.statistics == .init(hits: 0, misses: 1, idleBytes: 4096, idleBufferCount: 1))
        // Same class (4 KiB), a different request size.
        let again = pool.allocate(byteCount: 3000)
        #expect(Self.address(again) == first)
        #expect(again.byteCount == 3000)
        #expect(pool.statistics == .init(hits: 1, misses: 1, idleBytes: 0, idleBufferCount: 0))
        // Another class: a miss.
        let other = pool.allocate(byteCount: 5000)
        #expect(Self.address(other) != first)
        #expect(pool.statistics.misses == 2)
    }

    @Test func neverHandsOutABufferALiveBitmapStillUses() throws {
        let pool = PixelBufferPool()
        let allocator = PixelAllocator.pool(pool)
        var first: Bitmap? = try allocator.makeBitmap(width: 64, height: 64, pixelFormat: .rgba8)
        _ = first?.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 1) }
        let survivor = first
        first = nil
        // `survivor` still holds the storage: nothing went back to the pool.
        #expect(pool.statistics.idleBufferCount == 0)
        var next = try allocator.makeBitmap(width: 64, height: 64, pixelFormat: .rgba8)
        #expect(pool.statistics.hits == 0)
        #expect(next.storage !== survivor?.storage)
        _ = next.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 2) }
        #expect(survivor?.bytes.allSatisfy { $0 == 1 } == true)
        #expect(pool.statistics.hits == 0)
    }

    @Test func copyOnWriteOfAPooledBitmapLeavesThePooledBufferAlone() throws {
        let pool = PixelBufferPool()
        let original = try PixelAllocator.pool(pool).makeBitmap(width: 8, height: 8, pixelFormat: .gray8)
        var copy = original
        copy.withUnsafeMutableBytes { $0[0] = 255 }
        #expect(original.sample(x: 0, y: 0, channel: 0) == 0)
        #expect(copy.sample(x: 0, y: 0, channel: 0) == 255)
    }

    @Test func keepsIdleBuffersWithinTheBudgetFreeingTheOldestFirst() {
        let pool = PixelBufferPool(idleByteBudget: 2 * Self.mebibyte)
        var buffers: [PixelStorage] = (0..<3).map { _ in pool.allocate(byteCount: Self.mebibyte) }
        let addresses = buffers.map(Self.address)
        buffers.removeAll()  // returned oldest (index 0) first
        #expect(pool.statistics.idleBytes == 2 * Self.mebibyte)
        #expect(pool.statistics.idleBufferCount == 2)
        // The two newest stay, the most recent is handed out first.
        let a = pool.allocate(byteCount: Self.mebibyte)
        let b = pool.allocate(byteCount: Self.mebibyte)
        #expect([Self.address(a), Self.address(b)] == [addresses[2], addresses[1]])
        #expect(pool.statistics.hits == 2)
        _ = pool.allocate(byteCount: Self.mebibyte)
        #expect(pool.statistics.misses == 4)
    }

    @Test func freesABufferLargerThanTheBudget() {
        let pool = PixelBufferPool(idleByteBudget: Self.mebibyte)
        _ = pool.allocate(byteCount: 2 * Self.mebibyte)
        #expect(pool.statistics.idleBytes == 0)
        #expect(pool.statistics.idleBufferCount == 0)
    }

    @Test func trimsOnDemand() {
        let pool = PixelBufferPool()
        do {
            let held = (0..<4).map { _ in pool.allocate(byteCount: Self.mebibyte) }
            #expect(held.count == 4)
        }
        #expect(pool.statistics.idleBytes == 4 * Self.mebibyte)
        pool.trim(to: Self.mebibyte + 1)
        #expect(pool.statistics.idleBufferCount == 1)
        #expect(pool.statistics.idleBytes == Self.mebibyte)
        pool.removeAll()
        #expect(pool.statistics.idleBufferCount == 0)
        #expect(pool.statistics.idleBytes == 0)
        pool.idleByteBudget = 0
        _ = pool.allocate(byteCount: 10)
        #expect(pool.statistics.idleBufferCount == 0)
    }

    @Test func zeroesAReusedBufferWhenAsked() {
        let pool = PixelBufferPool()
        do {
            let dirty = pool.allocate(byteCount: 10_000)
            _ = dirty.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0xAB) }
        }
        let clean = pool.allocate(byteCount: 10_000, zeroed: true)
        #expect(pool.statistics.hits == 1)
        #expect(clean.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
    }

    @Test func storageDoesNotKeepThePoolAlive() {
        var pool: PixelBufferPool? = PixelBufferPool()
        weak let weakPool = pool
        let storage = pool?.allocate(byteCount: 100)
        pool = nil
        #expect(weakPool == nil)
        // Released after its pool: the buffer is simply freed.
        withExtendedLifetime(storage) {}
    }

    @Test func concurrentUseNeverSharesABuffer() async {
        let pool = PixelBufferPool(idleByteBudget: 8 * Self.mebibyte)
        let live = LiveSet()
        let sizes = [5_000, 70_000, 1_100_000]
        let tasks = 8, rounds = 60
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var failures = 0
                    for round in 0..<rounds {
                        let size = sizes[(task + round) % sizes.count]
                        let storage = pool.allocate(byteCount: size)
                        let tag = UInt8(truncatingIfNeeded: task * 31 + round)
                        withExtendedLifetime(storage) {
                            let fresh = live.insert(Self.address(storage))
                            if !fresh { failures += 1 }
                            _ = storage.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: tag) }
                        }
                        await Task.yield()
                        withExtendedLifetime(storage) {
                            // Another user of the buffer would have overwritten it all: check one byte a page.
                            let intact = storage.withUnsafeBytes { bytes in
                                stride(from: 0, to: bytes.count, by: 4096).allSatisfy { bytes[$0] == tag } && bytes[bytes.count - 1] == tag
                            }
                            if !intact { failures += 1 }
                            // Leave the live set before the storage goes back to the pool.
                            live.remove(Self.address(storage))
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
        let statistics = pool.statistics
        #expect(statistics.hits + statistics.misses == tasks * rounds)
        #expect(statistics.hits > 0)
        #expect(statistics.idleBufferCount <= tasks * sizes.count)
    }
}
