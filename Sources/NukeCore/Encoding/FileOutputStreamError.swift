#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A system call of ``FileOutputStream`` failed.
public struct FileOutputStreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's path (or the description the stream was given).
    public var path: String
    /// `open`, `write` or `close`.
    public var operation: String
    /// The `errno` value.
    public var code: Int32

    /// Creates an error for `operation` (`"open"`, `"write"`...) on `path` that failed with `errno` `code`.
    public init(path: String, operation: String, code: Int32) {
        self.path = path
        self.operation = operation
        self.code = code
    }

    /// `"out.png: write failed: No space left on device"`.
    public var description: String {
        "\(path): \(operation) failed: \(String(cString: strerror(code)))"
    }
}
