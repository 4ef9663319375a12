/// An owned block of pixel memory and the closure that gives it back.
///
/// The memory can come from anywhere: the heap (``allocate(byteCount:zeroed:)``), a
/// ``PixelBufferPool`` (the buffer goes back to its pool when the storage is released), a region
/// mapped from another process (the deallocator calls `munmap`), or a caller's own buffer
/// (``init(adopting:byteCount:deallocator:)`` with the caller's release closure). The deallocator
/// runs exactly once, when the last reference to the storage goes away.
///
/// A ``Bitmap`` holds its pixels in a `PixelStorage` and is copy-on-write over it.
///
/// ## Why this is `Sendable`
///
/// The class has no mutable Swift state: the address is kept as an immutable `UInt` bit pattern,
/// the byte count and the deallocator are `let`s, so the compiler checks the conformance and no
/// `@unchecked` is needed. The *memory* behind the address is written through unsafe pointers,
/// under the same model as `Array`'s buffer: ``Bitmap`` writes only after
/// `isKnownUniquelyReferenced` has shown that no other value (on any thread) shares the storage,
/// and copies it otherwise. Code that writes through ``withUnsafeMutableBytes(_:)`` directly must
/// keep to that rule: write only to storage that no bitmap or other thread is using yet — for
/// example one just allocated and not yet handed to ``Bitmap/init(width:height:pixelFormat:alphaMode:bytesPerRow:storage:)``.
public final class PixelStorage: Sendable {
    /// The start of the memory, as a bit pattern (never 0).
    private let address: UInt
    /// The number of usable bytes.
    public let byteCount: Int
    /// Gives the memory back; called once, from `deinit`.
    private let deallocator: @Sendable (UnsafeMutableRawBufferPointer) -> Void

    /// The alignment of memory from ``allocate(byteCount:zeroed:)`` and of pooled buffers: a cache line,
    /// and enough for any SIMD load.
    public static let alignment = 64

    /// Adopts memory allocated elsewhere: mapped memory, a pooled buffer, or the caller's own.
    ///
    /// The storage does not copy the memory: it reads and writes it in place until it is
    /// released, then calls `deallocator` exactly once with the same pointer and byte count.
    /// Until then the caller must neither free the memory nor write to it while a bitmap uses it.
    ///
    /// ```swift
    /// let region = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)!
    /// let storage = PixelStorage(adopting: region, byteCount: size) { munmap($0.baseAddress, $0.count) }
    /// ```
    /// - Parameters:
    ///   - pointer: The start of the memory.
    ///   - byteCount: The number of bytes at `pointer` the storage may use (≥ 0).
    ///   - deallocator: Releases the memory; receives `pointer` and `byteCount`.
    public init(
        adopting pointer: UnsafeMutableRawPointer,
        byteCount: Int,
        deallocator: @escaping @Sendable (UnsafeMutableRawBufferPointer) -> Void
    ) {
        precondition(byteCount >= 0, "negative byte count")
        self.address = UInt(bitPattern: pointer)
        self.byteCount = byteCount
        self.deallocator = deallocator
    }

    deinit {
        deallocator(UnsafeMutableRawBufferPointer(start: baseAddress, count: byteCount))
    }

    /// Allocates heap memory aligned to ``alignment`` bytes.
    ///
    /// - Parameters:
    ///   - byteCount: The number of bytes (≥ 0).
    ///   - zeroed: `true` to fill the memory with zeros; otherwise its contents are undefined and
    ///     the caller must write every byte it later reads.
    public static func allocate(byteCount: Int, zeroed: Bool = false) -> PixelStorage {
        precondition(byteCount >= 0, "negative byte count")
        // At least one byte, so that the address is never null even for an empty bitmap.
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: max(byteCount, 1), alignment: alignment)
        if zeroed { pointer.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount) }
        return PixelStorage(adopting: pointer, byteCount: byteCount) { $0.baseAddress?.deallocate() }
    }

    /// Calls `body` with the memory for reading.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: baseAddress, count: byteCount))
    }

    /// Calls `body` with the memory for writing, in place.
    ///
    /// No copy is made and nothing is checked: write only to storage that nothing else reads at
    /// the same time (see "Why this is `Sendable`" above). ``Bitmap/withUnsafeMutableBytes(_:)``
    /// is the safe way to write a bitmap's pixels.
    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: baseAddress, count: byteCount))
    }

    /// Returns a heap copy of the first `byteCount` bytes.
    func copy(byteCount count: Int) -> PixelStorage {
        precondition(count <= byteCount, "copy past the end of the storage")
        let copy = PixelStorage.allocate(byteCount: count)
        if count > 0 { copy.baseAddress.copyMemory(from: baseAddress, byteCount: count) }
        return copy
    }

    /// The start of the memory; valid while the storage is alive.
    var baseAddress: UnsafeMutableRawPointer {
        // The address came from a non-null pointer in `init`.
        UnsafeMutableRawPointer(bitPattern: address).unsafelyUnwrapped
    }
}
