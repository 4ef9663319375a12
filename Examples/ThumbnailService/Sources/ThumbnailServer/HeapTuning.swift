#if canImport(Glibc)
import Glibc
#endif

/// glibc's malloc returns a freed block of more than its mmap threshold (128 KiB, rising to at most
/// 32 MiB as such blocks are freed) to the kernel at once, and trims the heap's free top beyond
/// twice that: a service that decodes photographs one after another then faults in and zeroes
/// the same tens of MiB for every decode (libjpeg's coefficient buffer of a progressive JPEG, a
/// HEIF decoder's frames). Keeping blocks up to a bound in the heap (the process's choice, which a
/// library does not make for its host) cut JPEG thumbnails' CPU by 10–15 % and AVIF's by 9 % at
/// the same peak memory (Benchmarks/README.md, "The heap between decodes").
enum HeapTuning {
    /// Sets M_MMAP_THRESHOLD to `megabytes` MiB and M_TRIM_THRESHOLD to twice it; 0 leaves glibc's
    /// dynamic defaults. Returns whether glibc took both.
    @discardableResult
    static func keepFreedBlocks(upToMegabytes megabytes: Int) -> Bool {
        guard megabytes > 0 else { return true }
        let mmapThreshold: Int32 = -3, trimThreshold: Int32 = -1
        return mallopt(mmapThreshold, megabytes << 20) && mallopt(trimThreshold, 2 * (megabytes << 20))
    }

    /// glibc's `mallopt`, by name (<malloc.h> is not in the Glibc module) with glibc's parameter
    /// numbers; `false` when it refuses or is not there.
    private static func mallopt(_ parameter: Int32, _ value: Int) -> Bool {
        #if canImport(Glibc)
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return false }
        return unsafeBitCast(symbol, to: Mallopt.self)(parameter, Int32(clamping: value)) == 1
        #else
        return false
        #endif
    }

    /// Caps glibc's arenas at `count` (M_ARENA_MAX); glibc's default is 8 per core. Returns whether
    /// glibc took it.
    ///
    /// `malloc_trim` returns the free top of the main heap and the free blocks inside every arena,
    /// but not the free top of a thread's arena, which only a `free` beyond the trim threshold
    /// (twice ``keepFreedBlocks(upToMegabytes:)``) shrinks; a 20-line C program on glibc 2.36 keeps
    /// 20 MB resident after a thread frees everything and `malloc_trim(0)` runs. Uploads decoded as
    /// they arrive allocate on whichever thread decodes a piece: after a burst of 60 of them the
    /// 16 arenas of a 2-core machine held 30–60 MiB that way (RSS 49 → 80–113 MiB, and it stayed);
    /// with one arena per core, RSS went back to 50 MiB.
    @discardableResult
    static func limitArenas(to count: Int) -> Bool {
        let arenaMax: Int32 = -8
        return count > 0 && mallopt(arenaMax, count)
    }

    /// Gives the heap's free pages back to the kernel (glibc's `malloc_trim(0)`, every arena):
    /// after a burst of large uploads, the service returns to its size before it.
    static func releaseFreeMemory() {
        #if canImport(Glibc)
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }
}
