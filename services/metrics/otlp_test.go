package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/sandox/sandox/internal/poll"
)

// otlpReceiverDouble is a test double of an OTLP/HTTP collector (none can
// run here): it decodes each export request's protobuf body, as a
// collector does, and keeps the metrics.
type otlpReceiverDouble struct {
	mu      sync.Mutex
	paths   []string
	metrics []*metricspb.Metric
}

func (r *otlpReceiverDouble) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf body", http.StatusBadRequest)
		return
	}
	var export colmetrics.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &export); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.paths = append(r.paths, req.URL.Path)
	for _, rm := range export.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			r.metrics = append(r.metrics, sm.GetMetrics()...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&colmetrics.ExportMetricsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// sum returns the newest value of the cumulative sum name whose
// attributes include key=value, and whether one arrived.
func (r *otlpReceiverDouble) sum(name, key, value string) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	got, found := 0.0, false
	for _, m := range r.metrics {
		if m.GetName() != name || m.GetSum() == nil {
			continue
		}
		for _, p := range m.GetSum().GetDataPoints() {
			for _, a := range p.GetAttributes() {
				if a.GetKey() == key && a.GetValue().GetStringValue() == value {
					got, found = p.GetAsDouble(), true
				}
			}
		}
	}
	return got, found
}

// TestPushOTLP pushes the exporter's metrics to a receiver on loopback
// and checks that a counter derived from the stream arrives over
// OTLP/HTTP, with its value, at the standard path.
func TestPushOTLP(t *testing.T) {
	s := startSystem(t)
	waitSeq(t, s.exp, recordLife(t, s))
	recv := &otlpReceiverDouble{}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)

	done := make(chan error, 1)
	go func() {
		done <- PushOTLP(t.Context(), s.exp.Gatherer(), OTLPOptions{Endpoint: srv.URL, Interval: 100 * time.Millisecond})
	}()
	t.Cleanup(func() { require.NoError(t, <-done) })
	poll.Until(t, 10*time.Second, "sandox_actions_total to arrive over OTLP", func() bool {
		_, ok := recv.sum("sandox_actions_total", "code", "tool_error")
		return ok
	})
	got, _ := recv.sum("sandox_actions_total", "code", "tool_error")
	assert.Equal(t, 1.0, got)
	refused, ok := recv.sum("sandox_admission_refusals_total", "kind", "create_sandbox")
	assert.True(t, ok)
	assert.Equal(t, 1.0, refused)
	recv.mu.Lock()
	assert.Equal(t, "/v1/metrics", recv.paths[0])
	recv.mu.Unlock()
}

// TestOTLPEndpointChecked refuses endpoints that are not http(s) URLs with
// a host.
func TestOTLPEndpointChecked(t *testing.T) {
	for _, c := range []struct{ name, endpoint, want string }{
		{"bare host", "localhost:4318", ""},
		{"no host", "http://", ""},
		{"grpc scheme", "grpc://collector:4317", ""},
		{"base URL", "http://collector:4318", "http://collector:4318/v1/metrics"},
		{"own path", "https://collector/otlp/v1/metrics", "https://collector/otlp/v1/metrics"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := otlpURL(c.endpoint)
			if c.want == "" {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}
