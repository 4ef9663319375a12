import Foundation
import NukeCore
import NukePixels
import NukeIsolation
import Testing

extension IsolationSuites {
    /// The sandbox against code an attacker runs in a helper: each attack a compromised helper would
    /// try, made from inside the real sandbox (the test helper's probe decoder calls it), must be
    /// refused — with Landlock and without it (the fallback), as the user running the tests and, when
    /// that is root, as an unprivileged user too.
    @Suite(.serialized, .enabled(if: IsolationTestPaths.helperExists))
    struct SandboxAttackTests {
        /// Issue 26's list: the network (sockets, io_uring), signals to the host and anyone else,
        /// kernel surfaces (bpf, perf, user namespaces, mounts, keys, modules, reboot), reading or
        /// writing the host (process_vm_*, pidfd_getfd, ptrace, /proc/PID/mem), files outside the
        /// fonts, programs and processes, privileges, and what the host left open.
        static let attacks = [
            "socket-inet", "socket-unix", "socketpair", "io_uring_setup",
            "kill-host", "kill-parent", "kill-group", "kill-everyone", "tkill-host", "tgkill-host", "rt_sigqueueinfo-host",
            "pidfd_open-host", "pidfd_send_signal", "pidfd_getfd", "process_vm_readv-host", "process_vm_writev-host",
            "ptrace-host", "prlimit-host", "bpf", "perf_event_open", "userfaultfd", "unshare-user", "setns", "mount", "keyctl",
            "init_module", "reboot", "sethostname", "setuid-root", "chroot", "execve", "fork",
            "open-passwd", "open-host-mem", "open-tmp-write", "fcntl-setown", "ioctl-tiocsti", "prctl-dumpable",
            "capabilities", "root", "inherited-descriptors",
            // Issue 40: executable memory (shellcode runs as written) and the host's environment.
            "mmap-rwx", "mprotect-exec", "environment-secret", "environment-home",
        ]
        /// Refused where helpers' threads are capped: the RLIMIT_NPROC of the identity they take
        /// (the host runs as root), or of a user namespace of each helper's own (an unprivileged
        /// host, Linux 5.14 and later with user namespaces).
        static let threadAttacks = ["threads-1000"]
        /// Refused without Landlock (every path call fails); under Landlock, reading links and
        /// asking for access are not among what it confines.
        static let withoutLandlockAttacks = ["readlink-host-cwd", "access-shadow"]

        struct Outcome {
            var code: String
            var message: String
        }

        /// Runs the test helper as a probe host (`prefix` before it: `setpriv` to change user) and
        /// reads its lines.
        static func probe(landlock: Bool, prefix: [String] = [], environment extra: [String: String] = [:]) throws -> (outcomes: [String: Outcome], sandbox: String) {
            let process = Process()
            let command = prefix + [IsolationTestPaths.helper, "--probe-host"] + (landlock ? [] : ["--no-landlock"]) + ["--attacks"] + attacks + threadAttacks + withoutLandlockAttacks
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            // A secret in the host's environment, as a service holds its keys: no helper may see it.
            var environment = ProcessInfo.processInfo.environment
            environment["NUKE_TEST_SECRET"] = "AKIA-not-for-helpers"
            environment["HOME"] = environment["HOME"] ?? "/root"
            environment.merge(extra) { $1 }
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            var outcomes: [String: Outcome] = [:]
            var sandbox = ""
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: "\t", maxSplits: 2).map(String.init)
                guard fields.count >= 2 else { continue }
                if fields[0] == "sandbox" { sandbox = fields[1]; continue }
                outcomes[fields[0]] = Outcome(code: fields[1], message: fields.count > 2 ? fields[2] : "")
            }
            return (outcomes, sandbox)
        }

        static func expectEveryAttackRefused(_ result: (outcomes: [String: Outcome], sandbox: String), _ label: String, threadsCapped: Bool,
                                             landlock: Bool) {
            #expect(result.sandbox.contains("seccomp allow-list"), "\(label): \(result.sandbox)")
            for attack in attacks + (threadsCapped ? threadAttacks : []) + (landlock ? [] : withoutLandlockAttacks) {
                guard let outcome = result.outcomes[attack] else {
                    Issue.record("\(label): \(attack) has no outcome")
                    continue
                }
                // Refused by the filter (the helper ends: a sandbox violation) or by the kernel (the
                // call fails and the probe reports it).
                let refused = outcome.code == ImageCodecError.Code.sandboxViolation.rawValue
                    || (outcome.code == ImageCodecError.Code.decoderFailed.rawValue && outcome.message.contains(": refused ("))
                #expect(refused, "\(label): \(attack) was not refused: \(outcome.code): \(outcome.message)")
            }
        }

        static let isRoot = getuid() == 0
        /// An unprivileged helper can cap its threads in a user namespace of its own: the kernel
        /// counts RLIMIT_NPROC per namespace (5.14 and later) and lets users make namespaces.
        static let namespaceCapsThreads: Bool = {
            var name = utsname()
            uname(&name)
            let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let version = release.split(separator: ".").prefix(2).compactMap { Int($0.prefix { $0.isNumber }) }
            let allowed = (try? String(contentsOfFile: "/proc/sys/user/max_user_namespaces", encoding: .utf8))
                .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }.map { $0 > 0 } ?? false
            let restricted = (try? String(contentsOfFile: "/proc/sys/kernel/apparmor_restrict_unprivileged_userns", encoding: .utf8))
                .map { $0.hasPrefix("1") } ?? false
            return version.count == 2 && (version[0] > 5 || (version[0] == 5 && version[1] >= 14)) && allowed && !restricted
        }()
        static let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first { FileManager.default.isExecutableFile(atPath: $0) }
        /// An unprivileged user needs to reach the test helper (every folder above it searchable).
        static let unprivilegedCanRun: Bool = {
            guard isRoot, setpriv != nil else { return false }
            var url = URL(fileURLWithPath: IsolationTestPaths.helper)
            while url.path != "/" {
                url.deleteLastPathComponent()
                guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
                      let mode = attributes[.posixPermissions] as? Int, mode & 0o001 != 0 else { return false }
            }
            return true
        }()

        @Test(arguments: [true, false])
        func everyAttackIsRefusedAsTheTestsUser(landlock: Bool) throws {
            let result = try Self.probe(landlock: landlock)
            Self.expectEveryAttackRefused(result, "\(Self.isRoot ? "root" : "user"), Landlock \(landlock ? "on" : "off")",
                                          threadsCapped: Self.isRoot || Self.namespaceCapsThreads, landlock: landlock)
            if Self.isRoot {
                #expect(result.sandbox.contains("uid 65534 (started as root)"), "\(result.sandbox)")
                #expect(result.sandbox.contains("helpers together"), "\(result.sandbox)")
            } else if Self.namespaceCapsThreads {
                #expect(result.sandbox.contains("in this helper (a user namespace of its own)"), "\(result.sandbox)")
            }
            if !landlock { #expect(result.sandbox.contains("files: none"), "\(result.sandbox)") }
        }

        /// A font folder the app configured that the sandbox's user cannot read: the status says so
        /// (text in isolated SVGs renders without it), rather than the fonts silently missing.
        @Test(.enabled(if: isRoot, "needs root (helpers then run as nobody)"))
        func anUnreadableFontFolderIsReported() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-fonts-\(getpid())")
            let fonts = folder.appendingPathComponent("private")
            try FileManager.default.createDirectory(at: fonts, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            chmod(fonts.path, 0o700)
            let configuration = folder.appendingPathComponent("fonts.conf")
            try Data("""
                <?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">
                <fontconfig><dir>\(fonts.path)</dir><include ignore_missing="yes">/etc/fonts/fonts.conf</include></fontconfig>
                """.utf8).write(to: configuration)
            let result = try Self.probe(landlock: true, environment: ["FONTCONFIG_FILE": configuration.path])
            #expect(result.sandbox.contains("unreadable by uid 65534"), "\(result.sandbox)")
            #expect(result.sandbox.contains(fonts.path), "\(result.sandbox)")
        }

        @Test(.enabled(if: unprivilegedCanRun, "needs root (to become nobody with setpriv) and a build folder others can reach"),
              arguments: [true, false])
        func everyAttackIsRefusedAsAnUnprivilegedUser(landlock: Bool) throws {
            let prefix = [Self.setpriv!, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]
            let result = try Self.probe(landlock: landlock, prefix: prefix)
            Self.expectEveryAttackRefused(result, "nobody, Landlock \(landlock ? "on" : "off")", threadsCapped: Self.namespaceCapsThreads, landlock: landlock)
            #expect(!result.sandbox.contains("started as root"), "\(result.sandbox)")
            // Issue 40: an unprivileged host's helpers had no thread cap (3,000 threads in 0.4 s).
            if Self.namespaceCapsThreads {
                #expect(result.sandbox.contains("threads: at most \(IsolationConfiguration().threadsPerHelper) in this helper"), "\(result.sandbox)")
            }
        }
    }
}

extension IsolationSuites {
    /// A compromised helper's messages, made by hand (the test helper's `--fake-helper` mode), sent
    /// to a real host: sizes past the limits or past what cannot overflow, images in buffers it was
    /// not lent or that are too small, a terabyte of pixel memory asked for, a million frames, a
    /// 1 GiB message announced, unknown messages. Each is refused before the host allocates what it
    /// announces, the helper is killed, and the decode ends in `.sandboxViolation` (or, for a helper
    /// that hangs up half-way, an error saying it stopped answering).
    @Suite(.serialized, .enabled(if: IsolationTestPaths.helperExists))
    struct HostileHelperTests {
        static func pool(_ scenario: String) -> HelperPool {
            HelperPool(configuration: IsolationConfiguration(
                helper: .executable(path: IsolationTestPaths.helper, arguments: ["--fake-helper", scenario]),
                limits: IsolationLimits(wallTime: .seconds(10)), maximumHelpers: 1, spareHelpers: 0, startsHelpersFromZygote: false))
        }

        static func residentBytes() -> Int {
            let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
            let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        }

        /// The fake helper's encoding is right: an honest answer decodes.
        @Test func anHonestFakeDecodes() throws {
            let pool = Self.pool("honest")
            defer { pool.shutdown() }
            let image = try IsolatedDecoding.decode(IsolationTestPaths.command("I"), pool: pool)
            #expect(image.image.width == 3 && image.image.height == 2)
        }

        @Test(arguments: ["huge-width", "overflowing-size", "buffer-not-lent", "image-larger-than-buffer", "terabyte-allocation",
                          "many-frames", "gigabyte-message", "unknown-kind", "negative-header",
                          // Issue 40: values that trapped encoders downstream, and one budget per decode.
                          "nan-duration", "huge-duration", "huge-frame-duration", "huge-intent", "huge-loop-count",
                          "two-large-allocations"])
        func aHostileMessageIsRefused(_ scenario: String) throws {
            let pool = Self.pool(scenario)
            defer { pool.shutdown() }
            let before = Self.residentBytes()
            let error = try #require(throws: ImageCodecError.self) { try IsolatedDecoding.decode(IsolationTestPaths.command("I"), pool: pool) }
            // A violation, so refused when read, not at the wall-time limit (that would be `.timedOut`).
            #expect(error.code == .sandboxViolation, "\(scenario): \(error)")
            #expect(error.message.contains("was killed"), "\(scenario): \(error)")
            #expect(Self.residentBytes() - before < 64 << 20, "\(scenario): the host allocated what the helper announced")
        }

        /// A helper's own text (which could carry what it read) never reaches the caller: the
        /// error is the host's, with the code the helper reported.
        @Test func aHelpersTextStaysOutOfTheError() throws {
            let pool = Self.pool("secret-failure")
            defer { pool.shutdown() }
            let error = try #require(throws: ImageCodecError.self) { try IsolatedDecoding.decode(IsolationTestPaths.command("I"), pool: pool) }
            #expect(error.code == .corrupt, "\(error)")
            #expect(!String(describing: error).contains("AKIA"), "\(error)")
            #expect(!(error.codec ?? "").contains("libpng"), "\(error)")
        }

        /// Issue 40, one budget per decode from the declared size: the helper of a PNG whose header
        /// (read by the host) declares 160 × 120 may borrow four such images and 1 MiB, not the
        /// 1.2 × the 1 GiB byte limit it was lent before.
        @Test func aHelperBorrowsNoMoreThanTheHeaderDeclares() throws {
            let pool = Self.pool("allocation-beyond-declared")
            defer { pool.shutdown() }
            let png = try IsolationTestPaths.fixture("png/adam7-rgb-8-160x120.png")
            let error = try #require(throws: ImageCodecError.self) { try IsolatedDecoding.decode(png, pool: pool) }
            #expect(error.code == .sandboxViolation, "\(error)")
            #expect(error.message.contains("past the decode's"), "\(error)")
        }

        /// Issue 40, descriptors on the wire: 250 of the helper's descriptors with each message of
        /// an honest answer leave the host's descriptor table as it was, and the answer decodes.
        @Test func descriptorsAHelperSendsAreNeverTaken() throws {
            let pool = Self.pool("descriptors-with-every-message")
            defer { pool.shutdown() }
            func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }
            let before = openDescriptors()
            let image = try IsolatedDecoding.decode(IsolationTestPaths.command("I"), pool: pool)
            #expect(image.image.width == 3 && image.image.height == 2)
            #expect(openDescriptors() - before < 10, "the host kept descriptors its helper sent")
        }

        @Test func aMessageCutShortEndsTheDecode() throws {
            let pool = Self.pool("truncated-message")
            defer { pool.shutdown() }
            let error = try #require(throws: ImageCodecError.self) { try IsolatedDecoding.decode(IsolationTestPaths.command("I"), pool: pool) }
            #expect([ImageCodecError.Code.crashed, .sandboxViolation].contains(error.code), "\(error)")
        }
    }
}
