import Foundation
import Synchronization

/// A bounded line for one lane of decodes: `running` at once, `waiting` more queued, and at most
/// `perClient` running or waiting for any one client; everyone else is turned away at once
/// (back-pressure instead of a queue without bound).
///
/// Fair by cost, not by count: each client's cost is the time its requests held a slot, decayed
/// with a half-life (``Costs``).
/// - The waiter served next is the one whose client's requests cost least on average, less the
///   time it has waited (shortest first: a thumbnail of a photograph does not wait behind
///   documents made to run to their time limit; and a costly request is served once it has
///   waited out the difference, never starved); a client not seen yet counts as half of
///   `heavyCost`.
/// - A client whose accumulated cost is over `costBudget` is refused (429) until it decays.
/// - Clients whose requests take `heavyCost` or more on average, and clients not seen yet, hold
///   together at most all but one of the slots the lane can get: that one stays for clients known
///   to be light (a user of the service, not a run of fresh addresses posting documents made to
///   run to their time limit).
/// - A lane with a `lender` borrows the lender's idle slots (idle cores serve the slow lane), at
///   most `maxBorrowed` at once, returning each as its decode ends.
final class Admission: Sendable {
    enum Outcome: Equatable {
        /// Go ahead; call ``leave(_:)`` with the ticket afterwards.
        case admitted(Ticket)
        /// The line is full: 503 with `Retry-After`.
        case busy
        /// This client has `perClient` requests here already: 429 with `Retry-After`.
        case clientOverLimit
        /// This client's recent cost is over the lane's budget: 429, retry after this many seconds.
        case overBudget(retryAfter: Int)
        /// The request was cancelled while it waited.
        case cancelled
    }

    /// A slot held: who holds it, since when, and whether it is a lender's.
    struct Ticket: Equatable, Sendable {
        let client: String
        let started: ContinuousClock.Instant
        /// Started as a heavy or unknown client's: counted against all-but-one of the slots.
        let restricted: Bool
        let borrowed: Bool
    }

    private struct Waiter {
        var id: Int
        var client: String
        var continuation: CheckedContinuation<Outcome, Never>
        var since: ContinuousClock.Instant
    }

    private struct State {
        /// Slots held, the borrowed ones included.
        var running = 0
        var borrowed = 0
        var restrictedRunning = 0
        /// Slots lent to a borrowing lane.
        var lent = 0
        var waiters: [Waiter] = []
        /// Running and waiting requests per client.
        var perClient: [String: Int] = [:]
        var nextID = 0
        var costs = Costs()
    }

    let name: String
    let maxRunning: Int
    let maxWaiting: Int
    let perClientLimit: Int
    let costBudget: Duration?
    let heavyCost: Duration?
    let lender: Admission?
    let maxBorrowed: Int
    private let state = Mutex(State())
    /// Called, with no lock held, when this lane's slots free up: a borrower may take them.
    private let onFreed = Mutex<Callback?>(nil)

    /// A closure in a struct of its own: a bare closure as the `Mutex`'s generic value is stored at
    /// maximal abstraction, and each `withLock` passing it `inout` wrote it back wrapped in two more
    /// reabstraction thunks, so every request made the next call deeper, until a stack overflow.
    private struct Callback {
        let call: @Sendable () -> Void
    }

    init(name: String, running: Int, waiting: Int, perClient: Int, costBudget: Duration? = nil, heavyCost: Duration? = nil,
         halfLife: Duration = .seconds(60), lender: Admission? = nil, maxBorrowed: Int = .max) {
        self.name = name
        self.maxRunning = max(running, 1)
        self.maxWaiting = max(waiting, 0)
        self.perClientLimit = max(perClient, 1)
        self.costBudget = costBudget
        self.heavyCost = heavyCost
        self.lender = lender
        self.maxBorrowed = max(0, maxBorrowed)
        state.withLock { $0.costs.halfLife = halfLife.seconds }
        if let lender {
            lender.onFreed.withLock { $0 = Callback { [weak self] in self?.dispatch() } }
        }
    }

    /// Waits for a turn for `client`, or answers at once why there is none.
    func enter(client: String) async -> Outcome {
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let (answer, admitted) = state.withLock { state -> (Outcome?, [Admitted]) in
                    guard state.perClient[client, default: 0] < perClientLimit else { return (.clientOverLimit, []) }
                    let now = ContinuousClock.now
                    let cost = state.costs.cost(of: client, at: now)
                    if let budget = costBudget?.seconds, cost >= budget {
                        return (.overBudget(retryAfter: state.costs.secondsUntil(client, fallsTo: budget * 0.9, at: now)), [])
                    }
                    // In line, then every waiter that can start does, in order: straight in when
                    // nobody ahead of this request can use the slot.
                    state.waiters.append(Waiter(id: id, client: client, continuation: continuation, since: now))
                    state.perClient[client, default: 0] += 1
                    let admitted = admitReady(in: &state, at: now)
                    if state.waiters.count > maxWaiting, let index = state.waiters.firstIndex(where: { $0.id == id }) {
                        state.waiters.remove(at: index)
                        Self.release(client, in: &state)
                        return (.busy, admitted)
                    }
                    return (nil, admitted)
                }
                for (waiting, ticket) in admitted { waiting.resume(returning: .admitted(ticket)) }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                let waiter = state.waiters.remove(at: index)
                Self.release(client, in: &state)
                return waiter
            }
            waiter?.continuation.resume(returning: .cancelled)
        }
    }

    /// The request holding `ticket` is done: its time is its client's cost, and its slot goes to
    /// the waiter whose client cost least (or back to the lane it was borrowed from).
    func leave(_ ticket: Ticket) {
        let returned = state.withLock { state -> Bool in
            Self.release(ticket.client, in: &state)
            let now = ContinuousClock.now
            state.costs.add((now - ticket.started).seconds, to: ticket.client, at: now)
            state.running -= 1
            if ticket.restricted { state.restrictedRunning -= 1 }
            if ticket.borrowed { state.borrowed -= 1 }
            return ticket.borrowed
        }
        if returned { lender?.giveBack() }
        dispatch()
        announceFreed()
    }

    /// Adds `seconds` of slot time, over `requests` requests, to `client`'s cost, as if its
    /// requests had run (a replica told of a client's cost elsewhere; tests).
    func charge(_ client: String, seconds: Double, requests: Int = 1) {
        state.withLock { state in
            let now = ContinuousClock.now
            for _ in 0..<max(1, requests) { state.costs.add(seconds / Double(max(1, requests)), to: client, at: now) }
        }
        dispatch()
    }

    private typealias Admitted = (CheckedContinuation<Outcome, Never>, Ticket)

    /// Starts every waiter that can start now (to be resumed outside the lock), in order of
    /// expected cost less time waited: the cheapest first, and nobody waits for ever behind a
    /// stream of cheaper requests (a waiter's turn comes once it has waited out the difference).
    private func admitReady(in state: inout State, at now: ContinuousClock.Instant) -> [Admitted] {
        var admitted: [Admitted] = []
        let keys = state.waiters.map { expectedCost(of: $0.client, in: state, at: now) - (now - $0.since).seconds }
        var started: [Int] = []
        for index in state.waiters.indices.sorted(by: { (keys[$0], $0) < (keys[$1], $1) }) {
            if let ticket = start(state.waiters[index].client, in: &state, at: now) {
                admitted.append((state.waiters[index].continuation, ticket))
                started.append(index)
            }
        }
        for index in started.sorted(by: >) { state.waiters.remove(at: index) }
        return admitted
    }

    /// Starts every waiter that can start now.
    func dispatch() {
        let admitted = state.withLock { state in admitReady(in: &state, at: ContinuousClock.now) }
        for (continuation, ticket) in admitted { continuation.resume(returning: .admitted(ticket)) }
    }

    /// What a request of `client`'s is expected to cost: its mean so far, or half of `heavyCost`
    /// for a client not seen yet.
    private func expectedCost(of client: String, in state: State, at now: ContinuousClock.Instant) -> Double {
        state.costs.meanRequest(of: client, at: now) ?? (heavyCost?.seconds ?? 0) / 2
    }

    /// A slot for `client` if one may be had: the lane's own, else one borrowed; a heavy or
    /// unknown client leaves one of the slots the lane can get for clients known to be light.
    private func start(_ client: String, in state: inout State, at now: ContinuousClock.Instant) -> Ticket? {
        let restricted = heavyCost.map { heavy in state.costs.meanRequest(of: client, at: now).map { $0 >= heavy.seconds } ?? true } ?? false
        let ownFree = maxRunning - (state.running - state.borrowed) - state.lent
        let lendable = min(lender?.lendable ?? 0, maxBorrowed - state.borrowed)
        if restricted {
            let capacity = maxRunning + state.borrowed + lendable
            guard state.restrictedRunning + 1 <= max(1, capacity - 1) else { return nil }
        }
        let borrowed: Bool
        if ownFree > 0 {
            borrowed = false
        } else if state.borrowed < maxBorrowed, lender?.lend() == true {
            borrowed = true
            state.borrowed += 1
        } else {
            return nil
        }
        state.running += 1
        if restricted { state.restrictedRunning += 1 }
        return Ticket(client: client, started: now, restricted: restricted, borrowed: borrowed)
    }

    // MARK: - Lending

    /// Slots another lane may borrow now: none while anyone waits here, and half the lane stays free.
    var lendable: Int {
        state.withLock { spare(in: $0) }
    }

    private func spare(in state: State) -> Int {
        state.waiters.isEmpty ? max(0, maxRunning - (maxRunning + 1) / 2 - state.running - state.lent) : 0
    }

    private func lend() -> Bool {
        state.withLock { state in
            guard spare(in: state) > 0 else { return false }
            state.lent += 1
            return true
        }
    }

    private func giveBack() {
        state.withLock { $0.lent -= 1 }
        dispatch()
    }

    /// Tells the borrowing lane, outside every lock, that slots may be free here.
    private func announceFreed() {
        onFreed.withLock { $0 }?.call()
    }

    private static func release(_ client: String, in state: inout State) {
        let count = state.perClient[client, default: 1] - 1
        state.perClient[client] = count > 0 ? count : nil
    }

    /// Requests running and waiting now, for the log and readiness.
    var load: (running: Int, waiting: Int) {
        state.withLock { ($0.running, $0.waiters.count) }
    }

    /// Each client's cost: seconds of slot time, and requests, each halved every `halfLife` seconds.
    struct Costs {
        var halfLife = 60.0
        private var entries: [String: (cost: Double, requests: Double, at: ContinuousClock.Instant)] = [:]

        func cost(of client: String, at now: ContinuousClock.Instant) -> Double {
            guard let entry = entries[client] else { return 0 }
            return entry.cost * Self.decay((now - entry.at).seconds, halfLife: halfLife)
        }

        /// Seconds a request of `client`'s took, on (decayed) average; `nil` for a client not seen.
        func meanRequest(of client: String, at now: ContinuousClock.Instant) -> Double? {
            guard let entry = entries[client], entry.requests > 0 else { return nil }
            return entry.cost / entry.requests
        }

        mutating func add(_ seconds: Double, to client: String, at now: ContinuousClock.Instant) {
            let decay = entries[client].map { Self.decay((now - $0.at).seconds, halfLife: halfLife) } ?? 1
            let old = entries[client] ?? (0, 0, now)
            entries[client] = (old.cost * decay + max(0, seconds), old.requests * decay + 1, now)
            // Forget clients whose cost has decayed to nothing, now and then.
            if entries.count > 4096 {
                entries = entries.filter { $0.value.cost * Self.decay((now - $0.value.at).seconds, halfLife: halfLife) > 0.01 }
            }
        }

        /// Whole seconds until `client`'s cost decays to `target` (at least 1).
        func secondsUntil(_ client: String, fallsTo target: Double, at now: ContinuousClock.Instant) -> Int {
            let cost = cost(of: client, at: now)
            guard cost > target, target > 0 else { return 1 }
            return max(1, Int((halfLife * log2(cost / target)).rounded(.up)))
        }

        static func decay(_ seconds: Double, halfLife: Double) -> Double {
            pow(2, -max(0, seconds) / halfLife)
        }
    }
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
