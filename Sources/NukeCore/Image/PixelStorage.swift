#if canImport(Glibc)
import Glibc
#endif
/// An owned block of pixel memory and the closure that gives it back.
///
/// The memory can come from anywhere: the heap (``allocate(byteCount:zeroed:)``), a
/// `PixelBufferPool` (the buffer goes back to its pool when the storage is released), a region
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
/// under the same model as `Array`'s buffer: the storage offers no public write access, and
/// ``Bitmap`` writes only after `isKnownUniquelyReferenced` has shown that no other value (on
/// any thread) shares the storage, copying it otherwise. The only other writers are in NukeCore
/// and fill storage that nothing else can see yet (``PixelAllocator``'s `initializingWith`, a
/// pool zeroing a buffer before handing it out).
///
/// To write pixels, wrap the storage in a bitmap and use ``Bitmap/withUnsafeMutableBytes(_:)``:
/// pass the storage straight to the initializer, without keeping a reference of your own, or the
/// first write copies it.
public final class PixelStorage: Sendable {
    /// The start of the memory, as a bit pattern (never 0).
    private let address: UInt
    /// The number of usable bytes.
    public let byteCount: Int
    /// Gives the memory back; called once, from `deinit`.
    private let deallocator: @Sendable (UnsafeMutableRawBufferPointer) -> Void

    /// The alignment of memory from ``allocate(byteCount:zeroed:)`` and of pooled buffers: malloc's
    /// own (16 bytes on 64-bit Linux), enough for 128-bit SIMD loads. A larger alignment goes through
    /// `posix_memalign`, with which glibc maps every large buffer afresh and unmaps it on free: each
    /// decode then pays a page fault per 4 KiB (measured: a 1600×1200 JPEG decode took 1.57× as long,
    /// and progressive previews kept their memory), where malloc reuses freed memory.
    public static let alignment = 16

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

    /// Memory from the heap as ``allocate(byteCount:zeroed:)`` gives it, or `nil` when the system
    /// has none to give, where `allocate` would stop the process.
    static func allocateIfPossible(byteCount: Int, zeroed: Bool) -> PixelStorage? {
        guard byteCount >= 0 else { return nil }
        #if canImport(Glibc)
        // malloc's own alignment is `alignment` (16): it answers `nil` instead of trapping.
        guard let pointer = zeroed ? calloc(max(byteCount, 1), 1) : malloc(max(byteCount, 1)) else { return nil }
        return PixelStorage(adopting: pointer, byteCount: byteCount) { free($0.baseAddress) }
        #else
        return allocate(byteCount: byteCount, zeroed: zeroed)
        #endif
    }

    /// Zeroed memory of its own mapping, marked for transparent huge pages; `nil` where that is
    /// not available (not Linux, or `mmap` failed), for the caller to use the heap instead.
    static func mappedForHugePages(byteCount: Int) -> PixelStorage? {
        #if os(Linux)
        guard byteCount > 0, let region = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              region != MAP_FAILED else { return nil }
        _ = madvise(region, byteCount, MADV_HUGEPAGE)
        return PixelStorage(adopting: region, byteCount: byteCount) { _ = munmap($0.baseAddress, $0.count) }
        #else
        return nil
        #endif
    }

    /// Calls `body` with the memory for reading.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: baseAddress, count: byteCount))
    }

    /// Calls `body` with the memory for writing, in place.
    ///
    /// No copy is made and nothing is checked: call it only on storage that nothing else can see
    /// (see "Why this is `Sendable`" above). ``Bitmap/withUnsafeMutableBytes(_:)`` is the public
    /// way to write pixels.
    func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
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
