import Foundation
import NukeCore

extension ImageFiles {
    /// Writes a file through a stream, all or nothing.
    ///
    /// `body` writes into a new file next to `path` (`.NAME.nuke-PID-RANDOM.tmp`, created with
    /// the usual permissions), which is renamed to `path` once everything is written and closed.
    /// When `body` or a write fails the temporary file is removed, so a failed convert leaves no
    /// half-written output (and an existing file at `path` untouched).
    /// - Returns: The number of bytes written.
    /// - Throws: ``FileError`` for the file system; `body`'s own errors as they are.
    static func write(to path: String, _ body: (inout FileOutputStream) throws -> Void) throws -> Int {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw FileError(path: path, reason: "cannot be written (\(error.localizedDescription))")
        }
        let temporary = directory.appendingPathComponent(
            ".\(url.lastPathComponent).nuke-\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).tmp"
        ).path
        var stream: FileOutputStream
        do {
            stream = try FileOutputStream(path: temporary, exclusive: true)
        } catch {
            throw FileError(path: path, reason: "cannot be written (\(error))")
        }
        do {
            try body(&stream)
            try stream.close()
        } catch {
            try? stream.close()
            unlink(temporary)
            if let error = error as? FileOutputStreamError {
                throw FileError(path: path, reason: "cannot be written (\(String(cString: strerror(error.code))))")
            }
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw FileError(path: path, reason: "cannot be written (\(reason))")
        }
        return stream.bytesWritten
    }
}
