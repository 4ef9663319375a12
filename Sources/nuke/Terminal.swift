import Foundation

/// Writing to standard error and knowing whether it is a terminal.
enum Terminal {
    /// `true` when standard error is a terminal (progress bars then redraw in place).
    static let isStandardErrorATerminal = isatty(STDERR_FILENO) != 0

    /// Writes a line to standard error.
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Writes `error: PATH: REASON` to standard error, naming the path once: a ``FileError``
    /// already names its own path.
    static func error(path: String, _ error: any Error) {
        Self.error(errorLine(path: path, error))
    }

    /// `error: PATH: REASON`, or `error: REASON` when the error names its path itself.
    static func errorLine(path: String, _ error: any Error) -> String {
        if let error = error as? FileError, error.path == path { return "error: \(error)" }
        return "error: \(path): \(error)"
    }

    /// Writes text to standard error without a newline.
    static func errorRaw(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// `"1.2 MB"`, `"803 B"`.
    static func bytes(_ count: Int) -> String {
        let units = ["B", "KB", "MB", "GB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// A duration in seconds.
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Milliseconds with one decimal: `"12.3 ms"`.
    static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.1f ms", seconds(duration) * 1000)
    }
}
