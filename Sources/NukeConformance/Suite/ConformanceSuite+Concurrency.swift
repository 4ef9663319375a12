import Foundation
import NukeCore

extension ConformanceSuite {
    /// Decodes fixtures from ``Options/concurrencyWidth`` tasks at once, each with its own
    /// decoder instances, and checks every result equals a sequential decode: the same
    /// image, or the same error code. Half of the decodes are fed progressively in eight
    /// chunks.
    ///
    /// Each task of the task group runs its decodes on a thread of its own, so that they
    /// really overlap even when the cooperative thread pool is busy with other tests.
    ///
    /// - Parameter fixtures: The fixtures; default: every fixture of the manifest.
    public func checkConcurrency(_ fixtures: [Fixture]? = nil) async -> ConformanceResult {
        let fixtures = fixtures ?? manifest.fixtures
        var result = ConformanceResult(check: .concurrency, fixtures: fixtures.map(\.file))
        guard codec.makeDecoder != nil else {
            result.fail(nil, "the codec \(codec.info.name) has no decoder")
            return result
        }
        // The sequential decodes, off the cooperative pool as every check's (``run(_:on:)``).
        let loaded = result
        let inputs: [ConcurrencyCase]
        (inputs, result) = await BlockingWorkQueue.shared.run { [self] in
            var result = loaded
            var inputs: [ConcurrencyCase] = []
            for fixture in fixtures {
                guard let data = load(fixture, into: &result) else { continue }
                inputs.append(ConcurrencyCase(fixture: fixture, data: data, expected: decodeOnce(data)))
            }
            return (inputs, result)
        }
        guard !inputs.isEmpty else { return result }
        let width = max(1, options.concurrencyWidth)
        let cases = inputs
        let failures = await withTaskGroup(of: [ConformanceFailure].self) { group in
            for worker in 0..<width {
                group.addTask { [self] in
                    await Self.onOwnThread { self.concurrencyWorker(worker, cases: cases) }
                }
            }
            var all: [ConformanceFailure] = []
            for await failures in group { all += failures }
            return all
        }
        result.caseCount = width * max(1, options.concurrencyRepetitions) * inputs.count
        // One line per fixture and message is enough.
        var seen = Set<String>()
        result.failures += failures.filter { seen.insert("\($0.fixture ?? "")|\($0.message)").inserted }
        return result
    }

    /// One fixture of the concurrency check and its sequential outcome.
    struct ConcurrencyCase: Sendable {
        var fixture: Fixture
        var data: Data
        var expected: DecodeOutcome
    }

    /// Decodes every case, starting at a different one per worker, alternating one-shot and
    /// progressive decodes; returns the mismatches.
    private func concurrencyWorker(_ worker: Int, cases: [ConcurrencyCase]) -> [ConformanceFailure] {
        var failures: [ConformanceFailure] = []
        for repetition in 0..<max(1, options.concurrencyRepetitions) {
            for step in cases.indices {
                let item = cases[(step + worker * 7) % cases.count]
                let progressive = (step + worker + repetition) % 2 == 1
                let actual = progressive ? decodeInChunks(item.data) : decodeOnce(item.data)
                if actual != item.expected {
                    failures.append(ConformanceFailure(
                        check: .concurrency, fixture: item.fixture.file,
                        message: "task \(worker)\(progressive ? " (progressive)" : ""): got \(actual), a sequential decode \(item.expected)"
                    ))
                }
            }
        }
        return failures
    }

    /// Feeds `data` in eight chunks to one decoder, then decodes it; the final outcome.
    func decodeInChunks(_ data: Data) -> DecodeOutcome {
        decodeProgressively(data, feeding: .equalChunks(count: 8))
    }

    /// Runs `body` on a new thread and returns its result.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }
}
