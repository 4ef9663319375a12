#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file open for reading, which a decoder reads where it likes instead of holding it whole
/// (``ImageDecodingContext/file``): for codecs that read a file by its offsets, as libtiff reads
/// a TIFF's directories and strips (``ImageCodecCapabilities/readsFiles``).
///
/// The descriptor is owned and closed when the source is released. Reads are `pread`s at an
/// offset, so one source can be read from any thread.
public final class ImageFileSource: Sendable {
    /// The file's path, for messages.
    public let path: String
    /// The file's size in bytes when it was opened.
    public let size: Int
    /// The open descriptor (read-only, close-on-exec), for a C library's read callbacks.
    public let fileDescriptor: Int32

    /// Opens the regular file at `path`; `nil` when it cannot be opened or is not a regular file
    /// (the caller then reads it as usual, and reports that error).
    public init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return nil
        }
        self.path = path
        self.size = Int(status.st_size)
        self.fileDescriptor = fd
    }

    deinit { close(fileDescriptor) }

    /// Reads up to `buffer.count` bytes at `offset`: fewer only at the end of the file.
    ///
    /// - Returns: The number of bytes read, or `nil` when the read fails.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int? {
        guard let base = buffer.baseAddress, offset >= 0 else { return buffer.isEmpty ? 0 : nil }
        var done = 0
        while done < buffer.count {
            let n = pread(fileDescriptor, base + done, buffer.count - done, off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            done += n
        }
        return done
    }
}
