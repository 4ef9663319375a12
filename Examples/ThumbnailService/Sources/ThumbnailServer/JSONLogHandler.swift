import Foundation
import Logging

/// One JSON object a line on standard output (`--log-format json`): time, level, label,
/// message and the metadata (`request_id` among it), for log collectors that parse JSON.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    private static let lock = NSLock()

    func log(event: LogEvent) {
        var fields: [String: String] = [:]
        for (key, value) in metadata.merging(metadataProvider?.get() ?? [:], uniquingKeysWith: { $1 }).merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            fields[key] = "\(value)"
        }
        fields["time"] = ISO8601DateFormatter().string(from: Date())
        fields["level"] = event.level.rawValue
        fields["label"] = label
        fields["message"] = "\(event.message)"
        guard let line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return }
        Self.lock.lock()
        defer { Self.lock.unlock() }
        FileHandle.standardOutput.write(line + Data("\n".utf8))
    }
}
