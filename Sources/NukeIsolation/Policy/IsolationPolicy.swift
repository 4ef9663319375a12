import NukeCore

/// Which formats a registry decodes in helper processes.
public struct IsolationPolicy: Sendable, Hashable {
    enum Kind: Hashable {
        case none, all, formats(Set<ImageType>)
    }

    let kind: Kind

    /// Every decode in process (no isolation).
    public static let inProcess = IsolationPolicy(kind: .none)
    /// Every format isolated.
    public static let isolated = IsolationPolicy(kind: .all)
    /// The formats whose C library is known to crash or hang on hostile input: HEIC, HEIF and
    /// AVIF (libheif 1.15 segfaults on a conformance file) and SVG (librsvg 2.54 segfaults, aborts
    /// and stalls on its own crash tests). The default for untrusted input.
    public static let knownCrashers = IsolationPolicy(kind: .formats([.heic, .heif, .avif, .svg]))

    /// The given formats isolated.
    public static func formats(_ types: Set<ImageType>) -> IsolationPolicy {
        IsolationPolicy(kind: .formats(types))
    }

    /// Whether `type` is isolated, among `registered` formats.
    public func isolates(_ type: ImageType) -> Bool {
        switch kind {
        case .none: return false
        case .all: return true
        case .formats(let types): return types.contains(type)
        }
    }
}
