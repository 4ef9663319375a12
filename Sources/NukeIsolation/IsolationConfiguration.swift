import NukeCore

/// How a ``HelperPool`` starts and keeps its helpers.
public struct IsolationConfiguration: Sendable, Hashable {
    /// The program started as a helper. Default: this program, in helper mode.
    public var helper: IsolationHelperExecutable
    /// Per-decode limits.
    public var limits: IsolationLimits
    /// At most this many helpers at once (and decodes in flight); more decodes wait for one.
    /// Default: the number of processors, at least 2.
    public var maximumHelpers: Int
    /// Install the seccomp-bpf sandbox in each helper before it reads untrusted bytes. Default
    /// `true`; turn it off only to debug.
    public var isSandboxed: Bool
    /// Where helpers write their standard error (a file descriptor), or `nil` for /dev/null.
    public var standardError: Int32?
    /// Pixel memory each helper keeps shared with this process once the images using it are
    /// released, so that later decodes write into memory both processes have mapped already
    /// (no new mapping, page faults or zero-filling: most of the cost of isolating small
    /// decodes). Default 128 MiB; 0 unmaps every buffer as soon as its image is released.
    public var reusableBytesPerHelper: Int
    /// Start the helper program once as a zygote, warm it up, and start each helper as a copy
    /// of it (``HelperZygote``): a few milliseconds a helper instead of tens. Default `true`. A
    /// pool whose zygote cannot start (or keeps dying) starts its helpers as programs instead.
    public var startsHelpersFromZygote: Bool
    /// The formats a helper prepares before its sandbox is installed (codec libraries opened,
    /// their tables built, a tiny sample decoded), or `nil` (the default) for every registered
    /// format. A helper that is to decode only a few formats starts faster and smaller with just
    /// those: a codec library opened on first use (libheif, librsvg, libavcodec) cannot be opened
    /// once the sandbox forbids reading files, so another format may then fail to decode.
    public var warmUpFormats: Set<ImageType>?

    public init(
        helper: IsolationHelperExecutable = .currentExecutable,
        limits: IsolationLimits = IsolationLimits(),
        maximumHelpers: Int? = nil,
        isSandboxed: Bool = true,
        standardError: Int32? = nil,
        reusableBytesPerHelper: Int = 128 << 20,
        startsHelpersFromZygote: Bool = true,
        warmUpFormats: Set<ImageType>? = nil
    ) {
        self.helper = helper
        self.limits = limits
        self.maximumHelpers = max(1, maximumHelpers ?? max(2, HelperPool.processorCount))
        self.isSandboxed = isSandboxed
        self.standardError = standardError
        self.reusableBytesPerHelper = max(0, reusableBytesPerHelper)
        self.startsHelpersFromZygote = startsHelpersFromZygote
        self.warmUpFormats = warmUpFormats
    }
}
