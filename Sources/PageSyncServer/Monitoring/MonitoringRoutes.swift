import UV

/// What the metrics listener does with a request: the routing of `--metrics-listen`, a pure
/// function from a request head to a decision (the shell renders `/metrics` and `/healthz`,
/// which read the daemon's state; every other answer is decided here).
package enum MonitoringRoute: Equatable {
    /// `GET /metrics`: the Prometheus text format.
    case metrics
    /// `GET /healthz`: 200 or 503 (``HealthCheck``).
    case health
    /// A fixed answer: the index, `404`, `405`.
    case respond(HTTPResponse)
}

/// The paths of the metrics listener and what each answers (README.md, "Monitoring").
package enum MonitoringRoutes {
    /// `GET /metrics`.
    package static let metricsPath = "/metrics"
    /// `GET /healthz`.
    package static let healthPath = "/healthz"

    /// The route for `head`: `/metrics` and `/healthz` take `GET` and `HEAD` (other methods get
    /// `405` with `Allow`); `/` lists the two; any other path is `404`.
    package static func route(_ head: HTTPRequestHead) -> MonitoringRoute {
        let path = head.path
        guard path == "/" || path == metricsPath || path == healthPath else {
            return .respond(.text(404, "no such path: \(path.prefix(200)) (try \(metricsPath) or \(healthPath))"))
        }
        guard head.method == "GET" || head.method == "HEAD" else {
            return .respond(.text(405, "\(head.method.prefix(20)) is not allowed here: use GET", headers: [HTTPHeader("Allow", "GET, HEAD")]))
        }
        switch path {
        case metricsPath: return .metrics
        case healthPath: return .health
        default: return .respond(.text(200, "pagesyncd: \(metricsPath) (Prometheus text format), \(healthPath) (200 ok or 503 and why)"))
        }
    }
}
