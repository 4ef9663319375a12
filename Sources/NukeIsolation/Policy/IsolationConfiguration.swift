#if canImport(Glibc)
import Glibc
#endif
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
    /// Install the sandbox in each helper before it reads untrusted bytes (Docs/Isolation.md:
    /// capabilities and root dropped, Landlock, a seccomp-bpf allow-list). Default `true`; turn it
    /// off only to debug. A helper that cannot enter it does not decode.
    public var isSandboxed: Bool
    /// The user and group a helper takes when this process runs as root. Default 65534
    /// (`nobody`/`nogroup`); a uid no other process uses is better still.
    public var sandboxUserID: UInt32
    public var sandboxGroupID: UInt32
    /// How much lower than this process helpers run (`nice`, 0–19): a service that decodes its
    /// fast formats in process and slow ones in helpers keeps its fast requests fast when the
    /// processors are busy. Default 0.
    public var helperNiceness: Int
    /// Helpers kept started and sandboxed ahead of demand, so that a decode does not wait for a
    /// fork. Each helper serves one decode and is then replaced. Default 1.
    public var spareHelpers: Int
    /// Where helpers write their standard error (a file descriptor), or `nil` for /dev/null.
    public var standardError: Int32?
    /// Pixel memory the pool keeps for reuse once the images using it are released: helpers
    /// decode into buffers this process lends them (zeroed, and only after the helper that last
    /// held one has ended), so that a decode in a fresh helper maps, faults and zero-fills no
    /// new memory. Default 128 MiB; 0 unmaps every buffer as soon as its image is released.
    public var reusablePixelBytes: Int
    /// Whether helpers confine files with Landlock where the kernel has it (else every open is
    /// refused). Only tests of the fallback turn it off.
    @_spi(Testing) public var usesLandlock = true
    /// Where a helper's own words go: the text of a decoder's failure as the helper reported it
    /// (bounded and escaped, one line each). The caller's error never carries it (a helper taken
    /// over by an attacker could put anything there); this is for the operator's log. Default:
    /// standard error.
    public var helperTextLog: HelperTextLog = .standardError
    /// Appends the helper's escaped text to the caller's error message: only for the attack
    /// tests, which read what their probe in the helper reported.
    @_spi(Testing) public var forwardsHelperText = false

    /// A destination for helpers' text.
    public enum HelperTextLog: Sendable, Hashable {
        /// One line each on standard error.
        case standardError
        /// One line each on this descriptor (a log file or pipe the caller keeps open).
        case descriptor(Int32)
        /// Nowhere.
        case discarded
        /// To the app's own logger (one call per line, already bounded and escaped).
        case handler(HelperTextHandler)

        func write(_ line: String) {
            let fd: Int32
            switch self {
            case .standardError: fd = 2
            case .descriptor(let descriptor): fd = descriptor
            case .discarded: return
            case .handler(let handler):
                handler.body(line)
                return
            }
            let text = "NukeIsolation: \(line)\n"
            _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        }
    }

    /// An app's function for helpers' text, compared by identity (so that a configuration stays
    /// `Hashable`).
    public final class HelperTextHandler: Sendable, Hashable {
        let body: @Sendable (String) -> Void

        public init(_ body: @escaping @Sendable (String) -> Void) {
            self.body = body
        }

        public static func == (a: HelperTextHandler, b: HelperTextHandler) -> Bool { a === b }
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }

    /// The threads all helpers of the sandbox's identity may run together (RLIMIT_NPROC of that
    /// user, set as each helper enters its sandbox): four times what the codecs' pools (dav1d,
    /// libheif and librsvg start about one thread per processor) need in every helper this pool
    /// may have at once, so that other pools and replicas of the same identity fit beside it, and
    /// at least 256. Applies when helpers take an identity of their own (the host runs as root).
    public var helperThreadLimit: Int {
        max(256, 4 * (maximumHelpers + spareHelpers + 2) * threadsOneHelperNeeds)
    }

    /// The threads one helper may run when it keeps the host's identity (the host is not root):
    /// RLIMIT_NPROC in a user namespace of the helper's own, where the kernel counts its threads
    /// apart from the host's (Linux 5.14 and later). Four times what the codecs' pools need, and
    /// at least 64.
    public var threadsPerHelper: Int {
        max(64, 4 * threadsOneHelperNeeds)
    }

    /// About one thread per processor in each of dav1d's, libheif's and librsvg's pools.
    private var threadsOneHelperNeeds: Int { 2 * HelperPool.processorCount + 8 }

    /// Start the helper program once as a zygote, warm it up, and start each helper as a copy
    /// of it (`HelperZygote`): a few milliseconds a helper instead of tens. Default `true`. A
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
        sandboxUserID: UInt32 = 65534,
        sandboxGroupID: UInt32 = 65534,
        helperNiceness: Int = 0,
        spareHelpers: Int = 1,
        standardError: Int32? = nil,
        reusablePixelBytes: Int = 128 << 20,
        startsHelpersFromZygote: Bool = true,
        warmUpFormats: Set<ImageType>? = nil
    ) {
        self.helper = helper
        self.limits = limits
        self.maximumHelpers = max(1, maximumHelpers ?? max(2, HelperPool.processorCount))
        self.isSandboxed = isSandboxed
        self.sandboxUserID = sandboxUserID
        self.sandboxGroupID = sandboxGroupID
        self.helperNiceness = min(max(0, helperNiceness), 19)
        self.spareHelpers = max(0, spareHelpers)
        self.standardError = standardError
        self.reusablePixelBytes = max(0, reusablePixelBytes)
        self.startsHelpersFromZygote = startsHelpersFromZygote
        self.warmUpFormats = warmUpFormats
    }
}
