import Foundation
import NukeCore

/// Reading and writing files for the commands.
enum ImageFiles {
    static func read(_ path: String) throws(FileError) -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            throw FileError(path: path, reason: !exists ? "no such file" : isDirectory.boolValue ? "is a directory" : "cannot be read")
        }
    }

    static func write(_ data: Data, to path: String) throws(FileError) {
        let url = URL(fileURLWithPath: path)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        } catch {
            throw FileError(path: path, reason: "cannot be written (\(error.localizedDescription))")
        }
    }

    /// Reads a file in pieces: its first bytes (enough for any header hook), then the rest.
    final class Reader {
        private let handle: FileHandle
        private let path: String
        private(set) var bytesRead = 0
        /// The first piece; header hooks read EXIF blocks up to 64 KiB before a JPEG frame header.
        static let headSize = 128 * 1024
        static let pieceSize = 256 * 1024

        init(path: String) throws(FileError) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw FileError(path: path, reason: "no such file")
            }
            guard !isDirectory.boolValue, let handle = FileHandle(forReadingAtPath: path) else {
                throw FileError(path: path, reason: isDirectory.boolValue ? "is a directory" : "cannot be read")
            }
            self.handle = handle
            self.path = path
        }

        deinit {
            try? handle.close()
        }

        func head() throws(FileError) -> Data {
            try read(upTo: Self.headSize) ?? Data()
        }

        /// The next piece, or `nil` at the end of the file.
        func next() throws(FileError) -> Data? {
            try read(upTo: Self.pieceSize)
        }

        private func read(upTo count: Int) throws(FileError) -> Data? {
            do {
                guard let data = try handle.read(upToCount: count), !data.isEmpty else { return nil }
                bytesRead += data.count
                return data
            } catch {
                throw FileError(path: path, reason: "cannot be read (\(error.localizedDescription))")
            }
        }
    }
}
