#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Upload bodies the memory budget cannot hold, on disk: each in a file of `directory` that is
/// unlinked as soon as it is made (nothing is left behind by a crash), within `budget` bytes
/// across requests. A finished file is handed to the decoder mapped read-only, so its pages are
/// the page cache's (clean, given back under pressure), not the heap's; the file and its share
/// of the budget go when the last copy of that `Data` does.
final class Spool: Sendable {
    let directory: String
    let budget: ByteBudget

    /// - Parameter trimmer: The memory budget's: the spool is disk, not heap, but the decodes of
    ///   a burst of spooled uploads leave the heap to trim once the last of them is done.
    init(directory: String, limit: Int, trimmer: HeapTrimmer) {
        self.directory = directory
        budget = ByteBudget(limit: limit, trimmer: trimmer)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A new, already unlinked file, whose bytes are charged to `share`.
    func create(share: ByteBudget.Share) throws(Failure) -> File {
        var template = Array((directory + "/upload-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw Failure(description: "cannot create a file in \(directory): \(String(cString: strerror(errno)))") }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        unlink(path)
        return File(descriptor: descriptor, share: share)
    }

    /// One upload's file. Used by the task reading that upload only.
    final class File {
        private var descriptor: Int32
        let share: ByteBudget.Share
        private(set) var size = 0

        fileprivate init(descriptor: Int32, share: ByteBudget.Share) {
            self.descriptor = descriptor
            self.share = share
        }

        deinit { if descriptor >= 0 { close(descriptor) } }

        /// Appends `bytes`, once the share has grown to hold them.
        func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
            guard share.grow(to: size + bytes.count) else { throw Failure(description: "the spool is full") }
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw Failure(description: "cannot write the spool: \(String(cString: strerror(errno)))") }
                offset += written
            }
            size += bytes.count
        }

        /// The first `length` bytes written (fewer if fewer were).
        func read(_ length: Int) -> Data {
            var data = Data(count: min(length, size))
            let count = data.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            return data.prefix(max(0, count))
        }

        /// The bytes written, mapped read-only; the file closes here, and its disk space and its
        /// share return when the `Data` is released.
        func mapped() throws(Failure) -> Data {
            defer {
                close(descriptor)
                descriptor = -1
            }
            guard size > 0 else { return Data() }
            guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else {
                throw Failure(description: "cannot map the spool: \(String(cString: strerror(errno)))")
            }
            let share = share
            return Data(bytesNoCopy: address, count: size, deallocator: .custom { address, size in
                munmap(address, size)
                share.release()
            })
        }
    }
}
