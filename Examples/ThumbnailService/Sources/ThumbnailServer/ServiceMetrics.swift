import Prometheus
import Synchronization

/// The service's Prometheus metrics (swift-prometheus), exposed at `/metrics`:
/// - `thumbnail_requests_total{route,status,format}`: answers by route, status and output format;
/// - `thumbnail_request_seconds{route,status}`: time to answer, by route and status (histogram);
/// - `thumbnail_decode_seconds{format}`: decode time by input format (histogram);
/// - `thumbnail_decode_failures_total{format,code}`: decodes that failed, by error code
///   (`crashed`, `timed out`, `sandbox violation` and `helper lost` are helper failures);
/// - `thumbnail_helpers_started_total`, `thumbnail_helpers_replaced_total`: sandboxed helpers
///   started, and replaced after a crash, hang, sandbox violation or kill (restarts);
/// - `thumbnail_queue_waiting{lane}`, `thumbnail_queue_running{lane}`: queue depth and decodes
///   running, sampled at each scrape;
/// - `thumbnail_rejections_total{lane,reason}`: 503 (`busy`) and 429 (`client`) answers, and
///   503s of lane `memory` (`budget`: the byte budget could not hold the body).
public final class ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let helperCounts = Mutex<(started: Int, replaced: Int)>((0, 0))

    static let decodeBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]

    public init() {}

    /// `thumbnail_{name}_{unit}`, with its help line.
    private static func name(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "thumbnail", metricName: name, unitName: unit, helpText: help)
    }

    func countRequest(route: String, status: Int, format: String?) {
        registry.makeCounter(
            descriptor: Self.name("requests", "total", "Answers by route, status and output format."),
            labels: [("route", route), ("status", String(status)), ("format", format ?? "none")]
        ).increment()
    }

    func recordLatency(route: String, status: Int, duration: Duration) {
        registry.makeDurationHistogram(
            descriptor: Self.name("request", "seconds", "Time to answer, by route and status."),
            labels: [("route", route), ("status", String(status))], buckets: Self.decodeBuckets
        ).record(duration)
    }

    func recordDecode(format: String, duration: Duration) {
        registry.makeDurationHistogram(
            descriptor: Self.name("decode", "seconds", "Decode time by input format."),
            labels: [("format", format)], buckets: Self.decodeBuckets
        ).record(duration)
    }

    func countDecodeFailure(format: String, code: String) {
        registry.makeCounter(
            descriptor: Self.name("decode_failures", "total", "Decodes that failed, by input format and error code."),
            labels: [("format", format), ("code", code)]
        ).increment()
    }

    func countRejection(lane: String, reason: String) {
        registry.makeCounter(
            descriptor: Self.name("rejections", "total", "Requests turned away: busy (503) or too many from one client (429)."),
            labels: [("lane", lane), ("reason", reason)]
        ).increment()
    }

    /// Samples what is read rather than counted (the lanes, the helper pool), then writes every
    /// metric in Prometheus' text format.
    func exposition(lanes: [Admission], helpers: (started: Int, replaced: Int)?) -> String {
        for lane in lanes {
            let load = lane.load
            registry.makeGauge(descriptor: Self.name("queue", "waiting", "Requests waiting for a decode, by lane."), labels: [("lane", lane.name)])
                .set(Double(load.waiting))
            registry.makeGauge(descriptor: Self.name("queue", "running", "Decodes running, by lane."), labels: [("lane", lane.name)])
                .set(Double(load.running))
        }
        if let helpers {
            // The pool counts since it started; the counters follow by the difference.
            let delta = helperCounts.withLock { last -> (Int, Int) in
                defer { last = helpers }
                return (max(0, helpers.started - last.started), max(0, helpers.replaced - last.replaced))
            }
            registry.makeCounter(descriptor: Self.name("helpers_started", "total", "Sandboxed decode helpers started."))
                .increment(by: Int64(delta.0))
            registry.makeCounter(descriptor: Self.name("helpers_replaced", "total", "Helpers replaced after a crash, hang, sandbox violation or kill."))
                .increment(by: Int64(delta.1))
        }
        return registry.emitToString()
    }
}
