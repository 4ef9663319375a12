import NukeCore

/// Picks the output format from `Accept` (RFC 9110 §12.5.1): AVIF or WebP only when the client
/// names it (a `*/*` from an old client does not mean it reads AVIF), JPEG when it is acceptable
/// at all (named, `image/*` or `*/*`). The highest q-value wins; on a tie AVIF, then WebP, then
/// JPEG. A `q=0` refuses a type.
enum FormatNegotiation {
    /// The format, or `nil` when the client accepts none of them (406).
    static func choose(accept: String?, default defaultFormat: ImageType) -> ImageType? {
        guard let accept, !accept.trimmingCharacters(in: .whitespaces).isEmpty else { return defaultFormat }
        let ranges = parse(accept)
        var best: (type: ImageType, q: Double)?
        for (type, mime) in [(ImageType.avif, "image/avif"), (.webp, "image/webp"), (.jpeg, "image/jpeg")] {
            let q: Double?
            if let exact = ranges.first(where: { $0.range == mime }) {
                q = exact.q
            } else if type == .jpeg {
                q = ranges.first(where: { $0.range == "image/*" })?.q ?? ranges.first(where: { $0.range == "*/*" })?.q
            } else {
                q = nil
            }
            guard let q, q > 0 else { continue }
            if best == nil || q > best!.q { best = (type, q) }
        }
        return best?.type
    }

    /// Media ranges, lowercased, with their q-values (1 when absent; 0 when malformed, so that a
    /// broken weight refuses rather than prefers).
    static func parse(_ accept: String) -> [(range: String, q: Double)] {
        accept.split(separator: ",").compactMap { element in
            let parts = element.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let range = parts.first?.lowercased(), !range.isEmpty else { return nil }
            var q = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if pair.count == 2, pair[0].lowercased() == "q" {
                    q = Double(pair[1]).flatMap { (0...1).contains($0) ? $0 : nil } ?? 0
                }
            }
            return (range, q)
        }
    }
}
