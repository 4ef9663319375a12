import Synchronization

/// A bounded line for one lane of decodes: `running` at once, `waiting` more queued, taken in
/// turn client by client (round robin), and at most `perClient` running or waiting for any one
/// client. Everyone else is turned away at once: back-pressure instead of a queue without bound,
/// and no client can fill the line for the others.
final class Admission: Sendable {
    enum Outcome: Equatable {
        /// Go ahead; call ``leave()`` afterwards.
        case admitted
        /// The line is full: 503 with `Retry-After`.
        case busy
        /// This client has `perClient` requests here already: 429 with `Retry-After`.
        case clientOverLimit
        /// The request was cancelled while it waited.
        case cancelled
    }

    private struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State {
        var running = 0
        /// Waiters per client, and the clients in the order they are served.
        var waiting: [String: [Waiter]] = [:]
        var turns: [String] = []
        var waitingCount = 0
        /// Running and waiting requests per client.
        var perClient: [String: Int] = [:]
        var nextID = 0
    }

    let name: String
    let maxRunning: Int
    let maxWaiting: Int
    let perClientLimit: Int
    private let state = Mutex(State())

    init(name: String, running: Int, waiting: Int, perClient: Int) {
        self.name = name
        self.maxRunning = max(running, 1)
        self.maxWaiting = max(waiting, 0)
        self.perClientLimit = max(perClient, 1)
    }

    /// Waits for a turn for `client`, or answers at once why there is none.
    func enter(client: String) async -> Outcome {
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let answer: Outcome? = state.withLock { state in
                    guard state.perClient[client, default: 0] < perClientLimit else { return .clientOverLimit }
                    if state.running < maxRunning, state.waitingCount == 0 {
                        state.running += 1
                        state.perClient[client, default: 0] += 1
                        return .admitted
                    }
                    guard state.waitingCount < maxWaiting else { return .busy }
                    if state.waiting[client, default: []].isEmpty { state.turns.append(client) }
                    state.waiting[client, default: []].append(Waiter(id: id, continuation: continuation))
                    state.waitingCount += 1
                    state.perClient[client, default: 0] += 1
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard var queue = state.waiting[client], let index = queue.firstIndex(where: { $0.id == id }) else { return nil }
                let waiter = queue.remove(at: index)
                state.waiting[client] = queue.isEmpty ? nil : queue
                if queue.isEmpty { state.turns.removeAll { $0 == client } }
                state.waitingCount -= 1
                Self.release(client, in: &state)
                return waiter
            }
            waiter?.continuation.resume(returning: .cancelled)
        }
    }

    /// `client`'s request is done: its place goes to the next client in turn.
    func leave(client: String) {
        let next: Waiter? = state.withLock { state in
            Self.release(client, in: &state)
            guard !state.turns.isEmpty else {
                state.running -= 1
                return nil
            }
            let turn = state.turns.removeFirst()
            var queue = state.waiting[turn] ?? []
            let waiter = queue.removeFirst()
            state.waitingCount -= 1
            if queue.isEmpty {
                state.waiting[turn] = nil
            } else {
                state.waiting[turn] = queue
                state.turns.append(turn)
            }
            return waiter
        }
        next?.continuation.resume(returning: .admitted)
    }

    private static func release(_ client: String, in state: inout State) {
        let count = state.perClient[client, default: 1] - 1
        state.perClient[client] = count > 0 ? count : nil
    }

    /// Requests running and waiting now, for the log and readiness.
    var load: (running: Int, waiting: Int) {
        state.withLock { ($0.running, $0.waitingCount) }
    }
}
