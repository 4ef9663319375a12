import Logging
import ServiceLifecycle

/// The first service told of a graceful shutdown (SIGTERM): turns readiness off, waits
/// `delay` so that load balancers see it and stop sending, then returns, and the service group
/// goes on to the HTTP server, which stops accepting and finishes the requests in flight.
struct DrainService: Service {
    let readiness: Readiness
    let delay: Duration
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        readiness.startDraining()
        logger.info("draining", metadata: ["delay": "\(delay)"])
        if delay > .zero { try? await Task.sleep(for: delay) }
    }
}
