import CNukeIsolation
import Foundation
import NukeConformance
import NukeCore
import NukePixels
import NukeSession
import NukeGIF
@_spi(Testing) import NukeIsolation
import NukeJPEG
import NukePNG
import Synchronization
import Testing

/// Where the tests find the helper program and the fixtures.
enum IsolationTestPaths {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// NukeIsolationTestHelper, built beside the test bundle.
    static let helper: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("NukeIsolationTestHelper").path
    }()

    static var helperExists: Bool { FileManager.default.isExecutableFile(atPath: helper) }

    static func fixture(_ path: String) throws -> Data {
        try Data(contentsOf: repositoryRoot.appendingPathComponent("Fixtures").appendingPathComponent(path))
    }

    /// The test helper's format, known to this process as a host knows the formats of the codecs
    /// it links (a helper may name only those).
    static let testType: ImageType = {
        let type = ImageType(rawValue: "org.nukecodecs.test")
        ImageType.register(type, name: "NukeTest", filenameExtensions: ["nuketest"]) { $0.starts(with: Array("NUKETEST".utf8)) }
        return type
    }()

    /// A pool of the test helper. `forwardsHelperText`: the helper's own words are appended to
    /// its errors (the tests that read what a misbehaving decoder reported; never the default).
    static func pool(_ limits: IsolationLimits = IsolationLimits(wallTime: .seconds(20)), helpers: Int = 2,
                     forwardsHelperText: Bool = false) -> HelperPool {
        _ = testType
        var configuration = IsolationConfiguration(helper: .executable(path: helper), limits: limits, maximumHelpers: helpers)
        configuration.forwardsHelperText = forwardsHelperText
        return HelperPool(configuration: configuration)
    }

    static func command(_ byte: Character) -> Data {
        Data("NUKETEST".utf8) + Data([byte.asciiValue!])
    }
}

/// The result of work started at once on a thread of its own (outside Swift's cooperative pool),
/// awaited later. `@unchecked Sendable`: `state` is a `Mutex`, the only mutable storage.
final class ThreadResult<Value: Sendable>: @unchecked Sendable {
    private let state = Mutex<(result: Result<Value, any Error>?, waiter: CheckedContinuation<Result<Value, any Error>, Never>?)>((nil, nil))

    init(_ body: @escaping @Sendable () throws -> Value) {
        Thread { [self] in
            let result = Result { try body() }
            let waiter = state.withLock { state -> CheckedContinuation<Result<Value, any Error>, Never>? in
                state.result = result
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: result)
        }.start()
    }

    var result: Result<Value, any Error> {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Result<Value, any Error>? in
                    if let result = state.result { return result }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}

/// This process's descendants of the helper program's name (helpers and the zygote they are
/// copies of), reaped or not.
func childProcesses() -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    let parents: [Int32: Int32] = Dictionary(uniqueKeysWithValues: entries.compactMap(Int32.init).compactMap { pid in
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")"), stat.contains("(NukeIsolationTe") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 2 ? Int32(fields[1]).map { (pid, $0) } : nil
    })
    let me = getpid()
    return parents.keys.filter { pid in
        var ancestor = parents[pid]
        while let current = ancestor {
            if current == me { return true }
            ancestor = parents[current]
        }
        return false
    }.sorted()
}

/// The parent of `pid`, from /proc.
func parent(of pid: Int32) -> Int32? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    return fields.count > 2 ? Int32(fields[1]) : nil
}

/// This process's open sockets and shared-memory buffers of the helpers' kind.
func openSocketsAndSharedMemory() -> (sockets: Int, mappings: Int) {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    let sockets = fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))?.hasPrefix("socket:") == true }.count
    // /proc files report a size of 0: read them to the end.
    let maps = FileHandle(forReadingAtPath: "/proc/self/maps").map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) } ?? ""
    return (sockets, maps.split(separator: "\n").filter { $0.contains("nuke-pixels") }.count)
}

/// Every suite that starts helpers or maps lent pixel memory, run one suite and one test at a
/// time. `nothingIsLeftBehind` counts the sockets and mappings of the whole test process, so no
/// other pool may start or end beside it (run beside the attack suites, it once saw their 20
/// mappings before it and none after).
@Suite(.serialized)
enum IsolationSuites {}

extension IsolationSuites {
    @Suite(.serialized, .enabled(if: IsolationTestPaths.helperExists))
    struct IsolatedDecodingTests {
        @Test(arguments: ["jpeg/baseline-420.jpg", "png/rgba-8.png", "png/rgb-16.png", "jpeg/progressive-160x120.jpg"])
        func decodesLikeInProcess(_ path: String) throws {
            let data = try IsolationTestPaths.fixture(path)
            let pool = IsolationTestPaths.pool()
            defer { pool.shutdown() }
            let isolated = try IsolatedDecoding.decode(ImageDecodingContext(data: data, prefersHighBitDepth: true), pool: pool)
            let local = try ImageDecoderRegistry.shared.decode(ImageDecodingContext(data: data, prefersHighBitDepth: true))
            #expect(isolated.image.bitmap == local.image.bitmap)
            #expect(isolated.type == local.type)
            #expect(isolated.image.orientation == local.image.orientation)
            #expect(isolated.image.iccProfile == local.image.iccProfile)
            #expect(pool.status.isSandboxed == true, "\(pool.status)")
        }

        @Test func decodeToSizeAndErrorsCrossTheBoundary() throws {
            let pool = IsolationTestPaths.pool()
            defer { pool.shutdown() }
            let data = try IsolationTestPaths.fixture("jpeg/baseline-420.jpg")
            let context = ImageDecodingContext(data: data, targetSize: ImageSize(width: 16, height: 16))
            let isolated = try IsolatedDecoding.decode(context, pool: pool)
            #expect(isolated.image.bitmap == (try ImageDecoderRegistry.shared.decode(context)).image.bitmap)
            #expect(isolated.userInfo[.originalSizeKey] as? ImageSize != nil)
            let truncated = try IsolationTestPaths.fixture("jpeg/truncated-half.jpg")
            let error = try #require(throws: ImageCodecError.self) { try IsolatedDecoding.decode(truncated, pool: pool) }
            #expect(error.code == .incomplete)
            #expect(error.format == .jpeg)
            // In the host's words: the helper's codec name and text stay out of the error.
            #expect(error.message.contains("JPEG decoder in the helper reported incomplete"), "\(error)")
            #expect(error.codec?.contains("libjpeg-turbo") == false)
            // A decoder's error is not a helper's failure.
            #expect(pool.status.replaced == 0)
        }

        /// An input over 1 MiB for a codec that consumes its input as it arrives goes over in
        /// 256 KiB slices; the decode, to size or not, and a truncated input's error are the same as
        /// in process.
        @Test(arguments: [ImageType.jpeg, .png])
        func largeInputsGoOverInSlices(_ type: ImageType) throws {
            var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
            let bytes = (0..<(900 * 700 * 3)).map { _ in
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: seed >> 56)
            }
            let noise = Bitmap(width: 900, height: 700, pixelFormat: .rgb8, bytes: bytes)
            let data = try ImageEncoderRegistry.shared.encode(Image(bitmap: noise), as: type, options: ImageEncodingOptions(quality: 0.98))
            #expect(data.count > 4 * 256 << 10)
            let pool = IsolationTestPaths.pool()
            defer { pool.shutdown() }
            for target in [nil, ImageSize(width: 100, height: 100)] {
                let context = ImageDecodingContext(data: data, targetSize: target)
                let isolated = try IsolatedDecoding.decode(context, pool: pool)
                #expect(isolated.image.bitmap == (try ImageDecoderRegistry.shared.decode(context)).image.bitmap)
            }
            let truncated = data.prefix(data.count - 700 * 1000)
            let error = try #require(throws: ImageCodecError.self) { try IsolatedDecoding.decode(truncated, pool: pool) }
            #expect(error.code == .incomplete)
            #expect(error.format == type)
            #expect(pool.status.replaced == 0)
        }

        /// Each misbehaviour ends in its error; the host survives and the next decode gets a new helper.
        @Test(arguments: [
            ("S", ImageCodecError.Code.crashed, "SIGSEGV"),
            ("A", .crashed, "SIGABRT"),
            ("N", .sandboxViolation, "socket"),
            ("K", .sandboxViolation, "clone"),
            ("F", .decoderFailed, "Permission denied"),
        ])
        func misbehaviourEndsInAnError(_ command: String, _ code: ImageCodecError.Code, _ words: String) throws {
            // "F" reads what the helper's decoder reported (the open refused), forwarded for tests only.
            let pool = IsolationTestPaths.pool(forwardsHelperText: true)
            defer { pool.shutdown() }
            let data = IsolationTestPaths.command(Character(command))
            let error = try #require(throws: ImageCodecError.self) { try IsolatedDecoding.decode(data, pool: pool) }
            #expect(error.code == code, "\(error)")
            #expect(error.message.contains(words), "\(error)")
            if code != .decoderFailed {
                #expect(error.message.contains("9-byte"), "\(error)")
            }
            // Still decoding afterwards.
            let ok = try IsolatedDecoding.decode(IsolationTestPaths.command("I"), pool: pool)
            #expect(ok.image.width == 3)
        }

        @Test func aHangIsKilledAtTheWallTimeLimit() throws {
            let pool = IsolationTestPaths.pool(IsolationLimits(wallTime: .seconds(2), cpuTime: nil))
            defer { pool.shutdown() }
            let started = ContinuousClock.now
            let error = try #require(throws: ImageCodecError.self) { try IsolatedDecoding.decode(IsolationTestPaths.command("L"), pool: pool) }
            #expect(error.code == .timedOut, "\(error)")
            #expect(ContinuousClock.now - started < .seconds(15))
            #expect(pool.status.replaced == 1)
        }

        @Test func aSpinIsKilledAtTheCPULimit() throws {
            let pool = IsolationTestPaths.pool(IsolationLimits(wallTime: .seconds(30), cpuTime: .seconds(1)))
            defer { pool.shutdown() }
            let error = try #require(throws: ImageCodecError.self) { try IsolatedDecoding.decode(IsolationTestPaths.command("L"), pool: pool) }
            #expect(error.code == .limitExceeded, "\(error)")
            #expect(error.message.contains("CPU time"), "\(error)")
        }

        @Test func unboundedAllocationStopsAtTheAddressSpaceLimit() throws {
            let pool = IsolationTestPaths.pool(IsolationLimits(wallTime: .seconds(30), addressSpace: 768 << 20), forwardsHelperText: true)
            defer { pool.shutdown() }
            let error = try #require(throws: ImageCodecError.self) { try IsolatedDecoding.decode(IsolationTestPaths.command("M"), pool: pool) }
            #expect([ImageCodecError.Code.decoderFailed, .crashed].contains(error.code), "\(error)")
            if error.code == .decoderFailed { #expect(error.message.contains("out of memory"), "\(error)") }
            let ok = try IsolatedDecoding.decode(IsolationTestPaths.command("I"), pool: pool)
            #expect(ok.image.width == 3)
        }

        @Test func aHelperKilledFromOutside() async throws {
            let pool = IsolationTestPaths.pool()
            defer { pool.shutdown() }
            // "H" sleeps in the helper for 120 s (the wall limit is 20 s), so the helper is still
            // decoding when it is killed. The decode blocks a thread of its own, not one of the
            // cooperative pool, which the suite's other tests keep busy: a task started for it
            // could wait minutes to begin.
            let decode = ThreadResult { try IsolatedDecoding.decode(IsolationTestPaths.command("H"), pool: pool) }
            // The pool lists the helper as busy once it has the request: wait for that, however
            // long the machine takes (no deadline).
            var victims: [Int32] = []
            while victims.isEmpty {
                try await Task.sleep(for: .milliseconds(20))
                victims = pool.status.busyPIDs
            }
            for pid in victims { kill(pid, SIGKILL) }
            let result = await decode.result
            guard case .failure(let failure) = result, let error = failure as? ImageCodecError else {
                Issue.record("expected an error, got \(result)")
                return
            }
            #expect(error.code == .helperLost, "\(error)")
            #expect(error.message.contains("SIGKILL"), "\(error)")
        }

        @Test func manyConcurrentDecodes() async throws {
            let pool = IsolationTestPaths.pool(helpers: 3)
            defer { pool.shutdown() }
            let jpeg = try IsolationTestPaths.fixture("jpeg/baseline-420.jpg")
            let expected = try ImageDecoderRegistry.shared.decode(jpeg).image.bitmap
            let outcomes = await withTaskGroup(of: (Int, Result<Bitmap, ImageCodecError>).self) { group in
                for index in 0..<24 {
                    group.addTask {
                        let data = index % 6 == 5 ? IsolationTestPaths.command("S") : jpeg
                        do {
                            return (index, .success(try IsolatedDecoding.decode(data, pool: pool).image.bitmap))
                        } catch {
                            return (index, .failure(error as! ImageCodecError))
                        }
                    }
                }
                var all: [(Int, Result<Bitmap, ImageCodecError>)] = []
                for await outcome in group { all.append(outcome) }
                return all
            }
            #expect(outcomes.count == 24)
            for (index, outcome) in outcomes {
                switch outcome {
                case .success(let bitmap): #expect(index % 6 != 5 && bitmap == expected)
                case .failure(let error): #expect(index % 6 == 5 && error.code == .crashed, "\(error)")
                }
            }
            #expect(pool.status.busy == 0)
        }

        @Test(.timeLimit(.minutes(2)))
        func nothingIsLeftBehind() async throws {
            // The suites before this one end their pools, whose helpers are reaped and buffers
            // unmapped in the background (later on a loaded machine): start once they are gone,
            // so that the counts below are this pool's.
            while !childProcesses().isEmpty || openSocketsAndSharedMemory().mappings > 0 {
                try await Task.sleep(for: .milliseconds(20))
            }
            let before = openSocketsAndSharedMemory()
            do {
                let pool = IsolationTestPaths.pool(helpers: 2)
                for command in ["I", "S", "N", "I"] {
                    _ = try? IsolatedDecoding.decode(IsolationTestPaths.command(Character(command)), pool: pool)
                }
                let image = try IsolatedDecoding.decode(try IsolationTestPaths.fixture("png/rgba-8.png"), pool: pool)
                withExtendedLifetime(image) {
                    #expect(openSocketsAndSharedMemory().mappings >= 1, "the image lives in shared memory")
                }
                await pool.shutdown()
            }
            #expect(childProcesses().isEmpty, "\(childProcesses())")
            // The pool's idle pixel buffers are unmapped when the pool itself goes, and its
            // background work (the reaping of helpers) may hold it a moment after shutdown():
            // give that up to 30 s (milliseconds here); a leak stays and fails below.
            let deadline = ContinuousClock.now + .seconds(30)
            while openSocketsAndSharedMemory().mappings > before.mappings, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let after = openSocketsAndSharedMemory()
            #expect(after.sockets == before.sockets)
            #expect(after.mappings == before.mappings)
        }

        /// Helpers are copies of the pool's zygote, which ends with the pool.
        @Test func helpersAreCopiesOfTheZygote() throws {
            let pool = IsolationTestPaths.pool(helpers: 2)
            try pool.prewarm(2)
            let status = pool.status
            let zygote = try #require(status.zygotePID, "\(status.zygoteNote ?? "no zygote")")
            #expect(status.idlePIDs.count == 2)
            for helper in status.idlePIDs { #expect(parent(of: helper) == zygote) }
            #expect(status.isSandboxed == true)
            let image = try IsolatedDecoding.decode(try IsolationTestPaths.fixture("png/rgba-8.png"), pool: pool)
            #expect(image.image.bitmap == (try ImageDecoderRegistry.shared.decode(try IsolationTestPaths.fixture("png/rgba-8.png")).image.bitmap))
            pool.shutdown()
            #expect(childProcesses().isEmpty, "\(childProcesses())")
        }

        /// A zygote killed from outside takes its idle helpers with it; the next decode starts a
        /// new zygote and succeeds.
        @Test func aKilledZygoteIsReplaced() async throws {
            let pool = IsolationTestPaths.pool(helpers: 1)
            defer { pool.shutdown() }
            try pool.prewarm(1)
            let first = try #require(pool.status.zygotePID)
            let helper = try #require(pool.status.idlePIDs.first)
            kill(first, SIGKILL)
            let deadline = ContinuousClock.now + .seconds(10)
            while kill(helper, 0) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .microseconds(10_000)) }
            let ok = try IsolatedDecoding.decode(IsolationTestPaths.command("I"), pool: pool)
            #expect(ok.image.width == 3)
            let second = try #require(pool.status.zygotePID)
            #expect(second != first)
            #expect(pool.status.replaced == 1)
        }

        @Test func withoutAZygoteHelpersArePrograms() throws {
            let pool = HelperPool(configuration: IsolationConfiguration(helper: .executable(path: IsolationTestPaths.helper), maximumHelpers: 1,
                                                                        startsHelpersFromZygote: false))
            defer { pool.shutdown() }
            let ok = try IsolatedDecoding.decode(IsolationTestPaths.command("I"), pool: pool)
            #expect(ok.image.width == 3)
            try pool.prewarm(1)
            #expect(pool.status.zygotePID == nil)
            #expect(!pool.status.idlePIDs.isEmpty && pool.status.idlePIDs.allSatisfy { parent(of: $0) == getpid() }, "\(pool.status)")
        }

        /// Each decode has a helper of its own, which ends with it: an upload's helper never sees
        /// another's data. Pixels lie in buffers this process lends (zeroed, and only once the helper
        /// that last held one has ended) and keeps for reuse.
        @Test func oneHelperPerDecodeAndSealedPixels() async throws {
            func png(_ seed: UInt8) throws -> (data: Data, bitmap: Bitmap) {
                let bytes = (0..<(48 * 32 * 4)).map { UInt8(truncatingIfNeeded: $0 &* Int(seed) &+ Int(seed)) }
                let bitmap = Bitmap(width: 48, height: 32, pixelFormat: .rgba8, bytes: bytes)
                return (try ImageEncoderRegistry.shared.encode(Image(bitmap: bitmap), as: .png), bitmap)
            }
            let (a, b) = (try png(3), try png(5))
            let pool = IsolationTestPaths.pool(helpers: 2)
            defer { pool.shutdown() }
            let before = openSocketsAndSharedMemory().mappings
            var pids: Set<Int32> = []
            var first: ImageContainer? = try IsolatedDecoding.decode(a.data, pool: pool)
            let second = try IsolatedDecoding.decode(b.data, pool: pool)
            #expect(first?.image.bitmap == a.bitmap, "the first image is intact after a second decode")
            #expect(second.image.bitmap == b.bitmap)
            let mapped = openSocketsAndSharedMemory().mappings
            #expect(mapped == before + 2)
            first = nil
            // The released buffer is kept: once its helper has ended, the next decode of that size,
            // in a new helper, reuses it.
            let deadline = ContinuousClock.now + .seconds(10)
            while pool.status.ending > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .microseconds(1_000)) }
            let third = try IsolatedDecoding.decode(b.data, pool: pool)
            #expect(third.image.bitmap == b.bitmap)
            #expect(second.image.bitmap == b.bitmap, "the held image is intact after its neighbour's buffer was reused")
            #expect(openSocketsAndSharedMemory().mappings == mapped, "the third decode mapped nothing new")
            for _ in 0..<4 {
                try pool.prewarm(1)
                let helper = try #require(pool.status.idlePIDs.first)
                #expect(pids.insert(helper).inserted, "helper \(helper) served an earlier decode")
                _ = try IsolatedDecoding.decode(a.data, pool: pool)
                let deadline = ContinuousClock.now + .seconds(10)
                while kill(helper, 0) == 0, parent(of: helper) != nil, ContinuousClock.now < deadline { try await Task.sleep(for: .microseconds(2_000)) }
                #expect(parent(of: helper) == nil, "helper \(helper) still runs after its decode")
            }
            // Previews come through sealed copies.
            let progressive = try IsolationTestPaths.fixture("jpeg/progressive-160x120.jpg")
            let expected = try ImageDecoderRegistry.shared.decode(progressive)
            #expect(try IsolatedDecoding.decode(progressive, pool: pool).image.bitmap == expected.image.bitmap)
        }

        /// An animation decoded in a helper plays in the host: frames decoded on demand in a helper,
        /// composited here, equal to the in-process frames, seeks included; the helper goes back to
        /// the pool when the iterator is released.
        @Test(arguments: ["gif/mixed-disposal.gif", "gif/dispose-previous.gif", "apng/anim-blend-over.png"])
        func animationsPlayThroughTheBoundary(_ path: String) throws {
            let data = try IsolationTestPaths.fixture(path)
            let pool = IsolationTestPaths.pool(helpers: 1)
            defer { pool.shutdown() }
            let isolated = try IsolatedDecoding.decode(data, pool: pool)
            let local = try ImageDecoderRegistry.shared.decode(data)
            let animation = try #require(isolated.animation, "the isolated container keeps the animation")
            let expected = try #require(local.animation)
            #expect(animation.frameInfos == expected.frameInfos)
            #expect(animation.loopCount == expected.loopCount && animation.canvasSize == expected.canvasSize)
            do {
                let frames = try animation.makeIterator()
                let reference = try expected.makeIterator()
                while let frame = try frames.next() {
                    #expect(frame.canvas == (try reference.next())?.canvas, "frame \(frame.index)")
                }
                #expect(frames.nextIndex == expected.frameCount)
                #expect(pool.status.busy == 1, "the iterator holds its helper")
                try frames.seek(to: 1)
                #expect(try frames.next()?.canvas == (try expected.frame(at: 1)).canvas)
            }
            #expect(pool.status.busy == 0, "the helper ended with the iterator: \(pool.status)")
            #expect(try animation.frame(at: expected.frameCount - 1).canvas == (try expected.frame(at: expected.frameCount - 1)).canvas)
        }

        /// A helper busy in a decode ends when its host dies, instead of running on.
        /// "H": a helper hanging in its decode; "Z": one that stopped itself (SIGSTOP), so its
        /// parent-watcher thread cannot run either: the kernel ends it with its parent.
        @Test(arguments: ["H", "Z"])
        func aHelperDoesNotOutliveItsHost(_ command: String) async throws {
            let host = Process()
            host.executableURL = URL(fileURLWithPath: IsolationTestPaths.helper)
            host.arguments = ["--host-then-die", command]
            let output = Pipe()
            host.standardOutput = output
            try host.run()
            // The helper inherited the pipe: read the line, not to the end of the file.
            var text = ""
            while !text.hasSuffix("\n") {
                let piece = output.fileHandleForReading.availableData
                if piece.isEmpty { break }
                text += String(decoding: piece, as: UTF8.self)
            }
            let helper = try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), "the host printed \(text)")
            func isRunning() -> Bool {
                guard let stat = try? String(contentsOfFile: "/proc/\(helper)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")") else { return false }
                return !stat[stat.index(after: close)...].hasPrefix(" Z")
            }
            let died = ContinuousClock.now
            let deadline = died + .seconds(60)
            while isRunning(), ContinuousClock.now < deadline { try await Task.sleep(for: .microseconds(20_000)) }
            #expect(!isRunning(), "helper \(helper) (\(command)) still runs after its host died")
            print("helper \(helper) (\(command)) gone \(ContinuousClock.now - died) after its host printed its pid and died")
            if isRunning() { kill(helper, SIGKILL) }
        }

        /// A registry policy sends the formats it names to helpers, previews included.
        @Test func registryPolicyAndProgressiveSessions() async throws {
            let registry = ImageDecoderRegistry(codecs: ImageCodecs.linked)
            let pool = IsolationTestPaths.pool()
            defer { pool.shutdown() }
            let registrations = IsolatedDecoding.install(on: registry, policy: .formats([.jpeg]), pool: pool)
            #expect(registrations.count == 1)
            let truncated = try IsolationTestPaths.fixture("jpeg/truncated-half.jpg")
            let error = try #require(throws: ImageCodecError.self) { try registry.decode(truncated) }
            #expect(error.codec?.contains("isolated") == true, "\(error)")
            #expect(error.attempts.count == 1, "an isolated failure is not retried in process")

            // A download: chunks pushed one by one, previews drained after each.
            let data = try IsolationTestPaths.fixture("jpeg/progressive-160x120.jpg")
            let local = try ImageDecoderRegistry.shared.decode(data).image.bitmap
            let head = data.prefix(64)
            var (decoder, codec) = try #require(registry.incrementalDecoder(for: ImageDecodingContext(data: head, isCompleted: false)))
            #expect(codec.name.contains("isolated"))
            let step = max(1, data.count / 16)
            var previews = 0
            var final: ImageContainer?
            var offset = 0
            while offset < data.count {
                decoder.push(data[offset..<min(offset + step, data.count)])
                offset += step
                if offset >= data.count { decoder.finish() }
                loop: while true {
                    switch try decoder.next() {
                    case .needsMoreData: break loop
                    case .header: continue
                    case .preview(let preview): previews += 1; #expect(preview.isPreview)
                    case .final(let container): final = container; break loop
                    }
                }
            }
            #expect(previews >= 2)
            #expect(final?.image.bitmap == local)

            // Through a session too.
            let session = ImageDecodingSession(configuration: .init(registry: registry))
            session.append(data)
            session.finish()
            var sessionFinal: ImageContainer?
            for await event in session.events {
                if case .final(let container, _) = event { sessionFinal = container }
            }
            #expect(sessionFinal?.image.bitmap == local)
            #expect(pool.status.started >= 1)
        }
    }
}

/// librsvg's own crash, render-crash and error tests, decoded in a loop by this process through
/// helpers: every file ends in an image or an ImageCodecError within its time limit, and this
/// process stays up. Skipped without ../shared/corpora/svg.
enum SVGCrashCorpus {
    static let root = IsolationTestPaths.repositoryRoot.appendingPathComponent("../shared/corpora/svg/GNOME_librsvg/rsvg/tests/fixtures").standardizedFileURL

    static let files: [String] = ["crash", "render-crash", "errors"].flatMap { folder -> [String] in
        let directory = root.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".svg") || $0.hasSuffix(".svgz") }.sorted().map { "\(folder)/\($0)" }
    }
}

extension IsolationSuites.IsolatedDecodingTests {
    /// In the same serialized suite as the others: its helpers must not be counted by them.
    @Test(.enabled(if: !SVGCrashCorpus.files.isEmpty))
    func svgCrashCorpusEndsInImagesOrErrors() throws {
        let pool = IsolationTestPaths.pool(IsolationLimits(wallTime: .seconds(5), cpuTime: .seconds(5)), helpers: 2)
        defer { pool.shutdown() }
        var outcomes: [String: Int] = [:]
        for file in SVGCrashCorpus.files {
            let data = try Data(contentsOf: SVGCrashCorpus.root.appendingPathComponent(file))
            let started = ContinuousClock.now
            do {
                _ = try IsolatedDecoding.decode(ImageDecodingContext(data: data, limits: .untrusted), pool: pool)
                outcomes["image", default: 0] += 1
            } catch let error as ImageCodecError {
                outcomes[error.code.rawValue, default: 0] += 1
            }
            #expect(ContinuousClock.now - started < .seconds(12), "\(file)")
        }
        #expect(outcomes.values.reduce(0, +) == SVGCrashCorpus.files.count)
        print("SVG crash corpus, \(SVGCrashCorpus.files.count) files, isolated: \(outcomes.sorted { $0.key < $1.key })")
        // Still decoding afterwards.
        let ok = try IsolatedDecoding.decode(Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>"#.utf8), pool: pool)
        #expect(ok.image.width == 4)
    }
}

/// Every HEIC, HEIF and AVIF file of ../shared/corpora/heif (libheif's fuzzing corpus and test
/// files, SDWebImage's and Nuke's), decoded through helpers: each ends in an image or an error.
enum HEIFCorpus {
    static let root = IsolationTestPaths.repositoryRoot.appendingPathComponent("../shared/corpora/heif").standardizedFileURL
    static let files: [String] = {
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        return walker.compactMap { $0 as? String }.filter {
            let name = $0.lowercased()
            return name.hasSuffix(".heic") || name.hasSuffix(".heif") || name.hasSuffix(".avif") || name.contains("/corpus/")
        }.sorted()
    }()
}

extension IsolationSuites.IsolatedDecodingTests {
    @Test(.enabled(if: !HEIFCorpus.files.isEmpty))
    func heifCorpusEndsInImagesOrErrors() throws {
        let pool = IsolationTestPaths.pool(IsolationLimits(wallTime: .seconds(10), cpuTime: .seconds(10)), helpers: 2)
        defer { pool.shutdown() }
        var outcomes: [String: Int] = [:]
        for file in HEIFCorpus.files {
            let data = try Data(contentsOf: HEIFCorpus.root.appendingPathComponent(file))
            do {
                _ = try IsolatedDecoding.decode(ImageDecodingContext(data: data, limits: .untrusted), pool: pool)
                outcomes["image", default: 0] += 1
            } catch let error as ImageCodecError {
                outcomes[error.code.rawValue, default: 0] += 1
            }
        }
        #expect(outcomes.values.reduce(0, +) == HEIFCorpus.files.count)
        #expect(outcomes["image", default: 0] > 0)
        print("HEIF corpus, \(HEIFCorpus.files.count) files, isolated: \(outcomes.sorted { $0.key < $1.key })")
    }
}
