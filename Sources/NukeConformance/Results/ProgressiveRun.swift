import NukeCore

/// What one progressive feeding run of one fixture produced.
public struct ProgressiveRun: Sendable, Hashable, CustomStringConvertible {
    /// The fixture's file name.
    public var fixture: String
    /// How the data was fed.
    public var feeding: ProgressiveFeeding
    /// How many times `ImageDecoding.decodePartiallyDownloadedData(_:)` was called.
    public var partialCallCount: Int
    /// How many previews the decoder returned.
    public var previewCount: Int
    /// The `ImageContainer.UserInfoKey.scanNumberKey` of each preview that had one.
    public var scanNumbers: [Int]
    /// The `ImageContainer.UserInfoKey.rowCountKey` of each preview that had one.
    public var rowCounts: [Int]
    /// The data length at which each preview appeared.
    public var previewOffsets: [Int]
    /// `true` when the final `ImageDecoding.decode(_:)` returned an image.
    public var didDecode: Bool

    public var description: String {
        var text = "\(fixture) fed \(feeding): \(previewCount) preview\(previewCount == 1 ? "" : "s") in \(partialCallCount) partial calls"
        if !scanNumbers.isEmpty { text += ", scans \(scanNumbers)" }
        if !rowCounts.isEmpty { text += ", rows \(rowCounts.count > 12 ? "\(rowCounts.prefix(12))…" : "\(rowCounts)")" }
        return text
    }
}
