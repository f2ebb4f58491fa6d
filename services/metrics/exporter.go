package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sandox/sandox/services/audit"
)

// Options configures an Exporter. The zero value is usable.
type Options struct {
	// Timeout bounds the reading of the buckets at each scrape; 5 s when
	// zero.
	Timeout time.Duration
	// ServiceWait is how long a gathering waits for the control-plane
	// services to answer with their own metrics
	// (schemas.ServiceMetricsSubject); 500 ms when zero.
	ServiceWait time.Duration
	// UsageWait is how long a gathering waits for the orchestrator to
	// answer with the running sandboxes' live use
	// (schemas.SandboxStatsSubject), asked for all at once; 3 s when zero
	// (the engine takes about a second to sample a container's CPU).
	UsageWait time.Duration
	// NoUsage says the connection's credentials may not ask for the
	// sandboxes' live use (audit): the exporter does not ask, so a scrape
	// neither waits UsageWait nor makes the server refuse a request per
	// sandbox. sandox_usage_sandboxes and the usage gauges are then absent.
	NoUsage bool
	// UsageBySandbox adds each running sandbox's live use
	// (sandox_sandbox_*) to the sums by group (sandox_group_*): a series
	// per sandbox, which a system of many short-lived sandboxes may not
	// want in its time-series store.
	UsageBySandbox bool
	// Logger receives the exporter's logs; discarded when nil.
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.ServiceWait <= 0 {
		o.ServiceWait = 500 * time.Millisecond
	}
	if o.UsageWait <= 0 {
		o.UsageWait = 3 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Exporter holds sandox's metrics behind one NATS connection: the
// counters that Run derives from the audit stream, the gauges read from
// the buckets when they are gathered, and the metrics the control-plane
// services measure themselves, asked for when they are gathered. Its methods are safe for
// concurrent use.
type Exporter struct {
	reg    *prometheus.Registry
	all    prometheus.Gatherers // reg and the services'
	follow *audit.Follower
}

// New returns the exporter of the system nc reaches. nc may be
// disconnected: the stream's metrics then stand still and sandox_up says
// what cannot be read. New fails only without a connection.
func New(nc *nats.Conn, opts Options) (*Exporter, error) {
	if nc == nil {
		return nil, errors.New("metrics: no NATS connection")
	}
	opts.defaults()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	sc := newStreamCounters()
	f := newFollower(js, sc, opts.Logger)
	reg := prometheus.NewRegistry()
	reg.MustRegister(sc.collectors()...)
	reg.MustRegister(newStateCollector(js, opts.Timeout, f))
	if !opts.NoUsage {
		reg.MustRegister(newUsageCollector(nc, js, opts.Timeout, opts.UsageWait, opts.UsageBySandbox))
	}
	services := &serviceGatherer{nc: nc, wait: opts.ServiceWait}
	return &Exporter{reg: reg, all: prometheus.Gatherers{reg, services}, follow: f}, nil
}

// Run follows the audit stream until ctx is done, reading it again
// whenever it cannot (NATS down, no stream yet). It blocks; run it once.
func (e *Exporter) Run(ctx context.Context) { e.follow.Run(ctx) }

// Gatherer returns the metrics, the exporter's own and the services', for
// another exporter (OTLP) or a test.
func (e *Exporter) Gatherer() prometheus.Gatherer { return e.all }

// Handler returns the HTTP handler that serves the metrics in the
// Prometheus exposition formats. It does not guard itself: serve it on
// loopback, or behind a guard (dashboard.Guard).
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.all, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
