#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An ``ImageOutputStream`` that writes to a file descriptor through a 64 KiB buffer.
///
/// Writes of at least the buffer's size go straight to the descriptor; smaller ones are
/// gathered first, so an encoder's many small pieces cost few system calls. Call ``close()``
/// (or ``flush()``) to write what is still buffered and see its errors; a stream released
/// without either discards the buffered bytes and closes the descriptor it owns.
///
/// Not `Sendable`: one encoder writes to it at a time.
public final class FileOutputStream: ImageOutputStream {
    /// The size of the buffer small writes are gathered in.
    public static let bufferSize = 64 * 1024

    /// The descriptor written to; -1 once closed.
    public private(set) var fileDescriptor: Int32
    /// For error messages: the file's path, or a description such as "standard output".
    public let path: String
    /// The number of bytes written through the stream (including those still buffered).
    public private(set) var bytesWritten = 0

    private let closesOnDeinit: Bool
    /// The descriptor's offset when the stream started, where ``position`` 0 is; -1 when it
    /// cannot seek (a pipe).
    private let origin: off_t
    private let buffer = UnsafeMutableRawPointer.allocate(byteCount: FileOutputStream.bufferSize, alignment: 16)
    private var buffered = 0

    /// Creates (or truncates) the file at `path` and writes to it; the stream owns the descriptor.
    ///
    /// - Parameters:
    ///   - path: The file to write.
    ///   - exclusive: `true` to fail when the file exists instead of truncating it.
    ///   - permissions: The mode of a new file, before the process's umask.
    /// - Throws: ``FileOutputStreamError`` when the file cannot be opened.
    public convenience init(path: String, exclusive: Bool = false, permissions: UInt16 = 0o666) throws(FileOutputStreamError) {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC)
        let fd = open(path, flags, mode_t(permissions))
        guard fd >= 0 else { throw FileOutputStreamError(path: path, operation: "open", code: errno) }
        self.init(fileDescriptor: fd, path: path, closesOnDeinit: true)
    }

    /// Writes to an open descriptor.
    ///
    /// - Parameters:
    ///   - fileDescriptor: An open descriptor, written from its current offset.
    ///   - path: The file's path, for error messages.
    ///   - closesOnDeinit: `true` when the stream owns the descriptor: ``close()`` and `deinit`
    ///     close it. Otherwise ``close()`` only flushes.
    public init(fileDescriptor: Int32, path: String, closesOnDeinit: Bool) {
        self.fileDescriptor = fileDescriptor
        self.path = path
        self.closesOnDeinit = closesOnDeinit
        self.origin = lseek(fileDescriptor, 0, SEEK_CUR)
    }

    deinit {
        buffer.deallocate()
        if closesOnDeinit && fileDescriptor >= 0 { _ = posixClose(fileDescriptor) }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(FileOutputStreamError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        guard fileDescriptor >= 0 else { throw FileOutputStreamError(path: path, operation: "write", code: EBADF) }
        bytesWritten += bytes.count
        if buffered + bytes.count <= Self.bufferSize {
            (buffer + buffered).copyMemory(from: base, byteCount: bytes.count)
            buffered += bytes.count
            return
        }
        try flush()
        if bytes.count < Self.bufferSize {
            buffer.copyMemory(from: base, byteCount: bytes.count)
            buffered = bytes.count
        } else {
            try writeAll(UnsafeRawBufferPointer(bytes))
        }
    }

    /// Writes the buffered bytes to the descriptor.
    public func flush() throws(FileOutputStreamError) {
        guard buffered > 0 else { return }
        let count = buffered
        buffered = 0
        try writeAll(UnsafeRawBufferPointer(start: buffer, count: count))
    }

    /// Flushes, then closes the descriptor when the stream owns it. Closing twice does nothing.
    ///
    /// - Throws: ``FileOutputStreamError`` when the last bytes cannot be written or `close` fails
    ///   (on some file systems a write error only shows there).
    public func close() throws(FileOutputStreamError) {
        guard fileDescriptor >= 0 else { return }
        defer {
            if closesOnDeinit { fileDescriptor = -1 }
        }
        do {
            try flush()
        } catch {
            if closesOnDeinit { _ = posixClose(fileDescriptor) }
            throw error
        }
        if closesOnDeinit, posixClose(fileDescriptor) != 0 {
            throw FileOutputStreamError(path: path, operation: "close", code: errno)
        }
    }

    /// `write(2)` until every byte is out, retrying after signals and partial writes.
    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(FileOutputStreamError) {
        guard var next = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = posixWrite(fileDescriptor, next, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                throw FileOutputStreamError(path: path, operation: "write", code: errno)
            }
            next += written
            remaining -= written
        }
    }
}

extension FileOutputStream: SeekableImageOutputStream {
    public var position: Int { bytesWritten }

    /// Writes `bytes` over earlier ones: in the buffer when they are still there, otherwise with
    /// `pwrite` at their offset in the file.
    ///
    /// - Throws: ``FileOutputStreamError`` with `ESPIPE` when the descriptor cannot seek.
    public func overwrite(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(FileOutputStreamError) {
        precondition(offset >= 0 && bytes.count <= bytesWritten - offset, "overwrite past the end of the stream")
        guard var next = bytes.baseAddress, !bytes.isEmpty else { return }
        let bufferStart = bytesWritten - buffered
        if offset >= bufferStart {
            (buffer + (offset - bufferStart)).copyMemory(from: next, byteCount: bytes.count)
            return
        }
        guard origin >= 0 else { throw FileOutputStreamError(path: path, operation: "seek", code: ESPIPE) }
        try flush()
        var at = origin + off_t(offset), remaining = bytes.count
        while remaining > 0 {
            let written = pwrite(fileDescriptor, next, remaining, at)
            if written < 0 {
                if errno == EINTR { continue }
                throw FileOutputStreamError(path: path, operation: "write", code: errno)
            }
            next += written
            at += off_t(written)
            remaining -= written
        }
    }
}

// File-scope wrappers: inside the class, `close` and `write` name its own methods.
private func posixClose(_ fd: Int32) -> Int32 { close(fd) }
private func posixWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(fd, bytes, count) }
