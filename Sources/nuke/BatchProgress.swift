import Foundation
import NukeCore

/// Reports a batch's progress: a bar redrawn in place on a terminal, one line per file otherwise.
struct BatchProgress {
    let total: Int
    let isTerminal: Bool
    private(set) var done = 0
    private(set) var failed = 0

    init(total: Int, isTerminal: Bool) {
        self.total = total
        self.isTerminal = isTerminal
    }

    mutating func report(_ result: Conversion.Result) {
        done += 1
        if let error = result.error {
            failed += 1
            if isTerminal { Terminal.errorRaw("\r\u{1B}[K") }
            Terminal.error(path: result.input, error)
        } else if !isTerminal {
            print("ok \(result.input) → \(result.output) (\(Terminal.bytes(result.bytesIn)) → \(Terminal.bytes(result.bytesOut)))")
        }
        if isTerminal { draw(current: result.input) }
    }

    /// Clears the bar.
    func end() {
        if isTerminal { Terminal.errorRaw("\r\u{1B}[K") }
    }

    private func draw(current: String) {
        let width = 30
        let filled = total == 0 ? width : width * done / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let name = (current as NSString).lastPathComponent
        let failures = failed > 0 ? "  \(failed) failed" : ""
        Terminal.errorRaw("\r\u{1B}[K\(bar) \(done)/\(total)\(failures)  \(name.prefix(40))")
    }
}
