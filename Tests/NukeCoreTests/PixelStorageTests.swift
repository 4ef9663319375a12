import Foundation
import Synchronization
import Testing
@testable import NukeCore
import NukePixels

struct PixelStorageTests {
    /// Counts deallocator calls from any thread.
    final class Counter: Sendable {
        private let count = Mutex(0)
        func increment() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    /// 3×2 gray, rows padded to 4 bytes: 1 2 3 | 9, 4 5 6 | 9.
    static func padded() -> Bitmap {
        Bitmap(width: 3, height: 2, pixelFormat: .gray8, bytesPerRow: 4, bytes: [1, 2, 3, 9, 4, 5, 6, 9])
    }

    @Test func mutatingACopyLeavesTheOriginalAlone() {
        let storage = PixelStorage.allocate(byteCount: 4, zeroed: true)
        let original = Bitmap(width: 2, height: 2, pixelFormat: .gray8, storage: storage)
        var copy = original
        #expect(copy.storage === original.storage)
        copy.withUnsafeMutableBytes { $0[0] = 200 }
        #expect(copy.storage !== original.storage)
        #expect(original.bytes == [0, 0, 0, 0])
        #expect(copy.bytes == [200, 0, 0, 0])
        #expect(original.storage === storage)
    }

    @Test func mutatingAUniqueBitmapWritesInPlace() {
        var bitmap = Bitmap(width: 2, height: 1, pixelFormat: .gray8, storage: .allocate(byteCount: 2, zeroed: true))
        let before = ObjectIdentifier(bitmap.storage)
        bitmap.withUnsafeMutableBytes { $0[1] = 7 }
        #expect(ObjectIdentifier(bitmap.storage) == before)
        #expect(bitmap.bytes == [0, 7])
    }

    @Test func deallocatorRunsOnceWhenTheLastCopyGoes() {
        let counter = Counter()
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
        do {
            let storage = PixelStorage(adopting: pointer, byteCount: 16) { buffer in
                buffer.baseAddress?.deallocate()
                counter.increment()
            }
            let first = Bitmap(width: 4, height: 4, pixelFormat: .gray8, storage: storage)
            var second: Bitmap? = first
            let third = first
            withExtendedLifetime(third) {
                second = nil
                #expect(counter.value == 0)
            }
            #expect(second == nil)
        }
        #expect(counter.value == 1)
    }

    @Test func adoptsCallerMemoryInPlace() {
        let counter = Counter()
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 6, alignment: 1)
        for i in 0..<6 { memory[i] = UInt8(10 + i) }
        let address = UInt(bitPattern: memory.baseAddress)
        do {
            // The bitmap holds the only reference, so it may write in place.
            var bitmap = Bitmap(
                width: 1, height: 2, pixelFormat: .rgb8,
                storage: PixelStorage(adopting: memory.baseAddress.unsafelyUnwrapped, byteCount: 6) { buffer in
                    // The same memory comes back to its owner.
                    #expect(UInt(bitPattern: buffer.baseAddress) == address)
                    #expect(buffer.count == 6)
                    counter.increment()
                }
            )
            #expect(bitmap.sample(x: 0, y: 1, channel: 2) == 15)
            // Unique: the write lands in the caller's memory, no copy.
            bitmap.withUnsafeMutableBytes { $0[0] = 99 }
            #expect(memory[0] == 99)
            #expect(UInt(bitPattern: bitmap.storage.baseAddress) == address)
        }
        #expect(counter.value == 1)
        memory.deallocate()
    }

    @Test func storageMayBeLargerThanTheBitmap() {
        let storage = PixelStorage.allocate(byteCount: 100, zeroed: true)
        let bitmap = Bitmap(width: 2, height: 2, pixelFormat: .gray8, storage: storage)
        #expect(bitmap.byteCount == 4)
        #expect(bitmap.bytes.count == 4)
        #expect(bitmap.withUnsafeBytes { $0.count } == 4)
    }

    @Test func heapStorageIsAlignedAndZeroed() {
        for count in [0, 1, 63, 64, 4097] {
            let storage = PixelStorage.allocate(byteCount: count, zeroed: true)
            #expect(storage.byteCount == count)
            #expect(UInt(bitPattern: storage.baseAddress) % UInt(PixelStorage.alignment) == 0)
            #expect(storage.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
        }
    }

    @Test func rowsSkipThePadding() {
        let bitmap = Self.padded()
        #expect(bitmap.row(0) == [1, 2, 3])
        #expect(bitmap.row(1) == [4, 5, 6])
        #expect(bitmap.withUnsafeRow(1) { Array($0) } == [4, 5, 6])
        // In place: the row is a view of the storage.
        let offset = bitmap.withUnsafeRow(1) { UInt(bitPattern: $0.baseAddress) } - UInt(bitPattern: bitmap.storage.baseAddress)
        #expect(offset == 4)
    }

    @Test func writingARowCopiesSharedStorage() {
        let original = Self.padded()
        var copy = original
        copy.withUnsafeMutableRow(1) { row in
            #expect(row.count == 3)
            row[0] = 40
        }
        #expect(copy.row(1) == [40, 5, 6])
        #expect(original.row(1) == [4, 5, 6])
        #expect(copy.row(0) == [1, 2, 3])
    }

    @Test func bytesIsACopy() {
        let bitmap = Self.padded()
        var bytes = bitmap.bytes
        #expect(bytes == [1, 2, 3, 9, 4, 5, 6, 9])
        bytes[0] = 77
        #expect(bitmap.sample(x: 0, y: 0, channel: 0) == 1)
        #expect(Bitmap(width: 3, height: 2, pixelFormat: .gray8, bytesPerRow: 4, bytes: bytes) != bitmap)
        #expect(Bitmap(width: 3, height: 2, pixelFormat: .gray8, bytesPerRow: 4, bytes: bitmap.bytes) == bitmap)
        #expect(bitmap.packedBytes == [1, 2, 3, 4, 5, 6])
    }

    @Test func equalityComparesPixelsAcrossStorageKinds() {
        let heap = Bitmap(width: 3, height: 2, pixelFormat: .gray8, bytes: [1, 2, 3, 4, 5, 6])
        let pooled = try? PixelAllocator.pool(PixelBufferPool()).makeBitmap(width: 3, height: 2, pixelFormat: .gray8, bytesPerRow: 8) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0xEE)
            for y in 0..<2 { for x in 0..<3 { buffer[y * 8 + x] = UInt8(y * 3 + x + 1) } }
        }
        #expect(pooled == heap)
        #expect(pooled == Self.padded())
    }

    @Test func allocatorMakesZeroedOrInitializedBitmaps() throws {
        let zeroed = try PixelAllocator.heap.makeBitmap(width: 3, height: 3, pixelFormat: .rgba8, bytesPerRow: 16)
        #expect(zeroed.bytesPerRow == 16)
        #expect(zeroed.alphaMode == .straight)
        #expect(zeroed.bytes == [UInt8](repeating: 0, count: 48))
        let filled = try PixelAllocator.heap.makeBitmap(width: 2, height: 1, pixelFormat: .gray16) { buffer in
            #expect(buffer.count == 4)
            buffer.storeBytes(of: 0x1234, toByteOffset: 2, as: UInt16.self)
            buffer.storeBytes(of: 0, toByteOffset: 0, as: UInt16.self)
        }
        #expect(filled.sample(x: 1, y: 0, channel: 0) == 0x1234)
    }

    @Test func allocatorFailureIsThrown() {
        let failing = PixelAllocator { byteCount, _ throws(ImageCodecError) in
            throw ImageCodecError(.limitExceeded, stage: .decoding, message: "no shared memory for \(byteCount) bytes")
        }
        #expect(throws: ImageCodecError.self) {
            try failing.makeBitmap(width: 10, height: 10, pixelFormat: .rgb8)
        }
        let context = ImageDecodingContext(data: Data(), allocator: failing)
        #expect(throws: ImageCodecError.self) {
            try context.allocator.allocate(byteCount: 1)
        }
    }

    @Test func customAllocatorStorageBacksTheBitmap() throws {
        let counter = Counter()
        let allocator = PixelAllocator { byteCount, zeroed in
            counter.increment()
            return .allocate(byteCount: byteCount, zeroed: zeroed)
        }
        let context = ImageDecodingContext(data: Data(), allocator: allocator)
        let bitmap = try context.allocator.makeBitmap(width: 5, height: 5, pixelFormat: .gray8)
        #expect(counter.value == 1)
        #expect(bitmap.storage.byteCount == 25)
    }

    /// A bitmap whose bytes overflow an `Int` is refused before any allocation.
    @Test func anOverflowingSizeIsALimitError() {
        let error = #expect(throws: ImageCodecError.self) {
            try PixelAllocator.heap.makeBitmap(width: Int.max / 2, height: 3, pixelFormat: .rgba8)
        }
        #expect(error?.code == .limitExceeded)
    }

    /// More memory than the system has is `.limitExceeded`, where `UnsafeMutableRawPointer.allocate`
    /// would stop the process. (Not under AddressSanitizer, whose malloc aborts on such a request.)
    @Test(.enabled(if: ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil))
    func memoryTheSystemLacksIsALimitError() {
        let error = #expect(throws: ImageCodecError.self) {
            try PixelAllocator.heap.makeBitmap(width: 1 << 24, height: 1 << 24, pixelFormat: .rgba8)   // 1 PiB
        }
        #expect(error?.code == .limitExceeded)
    }
}
