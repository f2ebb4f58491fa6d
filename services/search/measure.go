package search

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sandox/sandox/schemas"
)

// Name is the search service's name where it answers for its own metrics
// (schemas.HeaderService).
const Name = "search"

// unknownProvider is the provider label of a request that names no
// provider the service has: the request names it, and would otherwise add
// series without end.
const unknownProvider = "(unknown)"

// measures are the metrics the search service measures itself, in a
// registry of its own that the metrics exporter asks for
// (services/metrics/report). They are safe for concurrent use.
type measures struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMeasures() *measures {
	m := &measures{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_search_requests_total",
			Help: "Search requests the search service answered, by provider and code (ok, or the error code: resource_exhausted for a sandbox over its quota)."},
			[]string{"provider", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sandox_search_request_duration_seconds",
			Help: "How long the search service took to answer a search request, by provider.", Buckets: prometheus.DefBuckets},
			[]string{"provider"}),
	}
	m.reg.MustRegister(m.requests, m.duration)
	return m
}

// measure counts one answered request.
func (s *Service) measure(resp schemas.SearchResponse, took time.Duration) {
	provider := resp.Provider
	if provider == "" {
		provider = s.def
	}
	if _, ok := s.providers[provider]; !ok {
		provider = unknownProvider
	}
	code := "ok"
	if resp.Error != nil {
		code = string(resp.Error.Code)
	}
	s.meas.requests.WithLabelValues(provider, code).Inc()
	s.meas.duration.WithLabelValues(provider).Observe(took.Seconds())
}
