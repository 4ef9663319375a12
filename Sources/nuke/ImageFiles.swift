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
}
