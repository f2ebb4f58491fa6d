package schemas

// ServiceMetricsSubject is where the metrics exporter (services/metrics)
// asks the control-plane services for the metrics they measure themselves
// (request latency, errors, population progress). Every instance of every
// service subscribes without a queue group and answers the empty request
// with its metrics in the Prometheus text format, the header
// HeaderService naming the service; the exporter gathers the answers that
// come within its wait.
const ServiceMetricsSubject = "sandox.svc.metrics"

// HeaderService names the service (data, search) that answered on
// ServiceMetricsSubject.
const HeaderService = "Sandox-Service"
