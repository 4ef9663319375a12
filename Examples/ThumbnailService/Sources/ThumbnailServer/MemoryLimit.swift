import Foundation

/// The memory this process may use: its container's limit (cgroup v2 `memory.max`, or v1
/// `memory.limit_in_bytes`), else the machine's physical memory.
enum MemoryLimit {
    static var bytes: Int {
        let physical = Int(clamping: ProcessInfo.processInfo.physicalMemory)
        return cgroupLimit(root: "/sys/fs/cgroup", selfCgroup: try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8))
            .map { min($0, physical) } ?? physical
    }

    /// The limit the cgroup files under `root` set for the cgroup `/proc/self/cgroup` names, or
    /// `nil` when there is none ("max", or v1's page-rounded "no limit").
    static func cgroupLimit(root: String, selfCgroup: String?) -> Int? {
        var candidates: [String] = []
        for line in (selfCgroup ?? "").split(separator: "\n") {
            // v2: `0::/path`; v1: `N:memory:/path`.
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = String(fields[2])
            if fields[0] == "0", fields[1].isEmpty {
                candidates += [root + path + "/memory.max", root + "/memory.max"]
            } else if fields[1].split(separator: ",").contains("memory") {
                candidates += [root + "/memory" + path + "/memory.limit_in_bytes", root + "/memory/memory.limit_in_bytes"]
            }
        }
        for file in candidates {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if value == "max" { return nil }
            // cgroup v1 says "no limit" with the largest page-aligned 64-bit value.
            if let bytes = Int(value), bytes > 0, bytes < (1 << 60) { return bytes }
            return nil
        }
        return nil
    }
}
