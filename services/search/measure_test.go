package search

import (
	"bytes"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/metrics/report"
)

// TestServeMetrics checks the metrics the service answers on
// schemas.ServiceMetricsSubject: requests by provider and code (a
// request over its sandbox's quota, one naming an unknown provider) and
// the latency by provider, labelled with the instance.
func TestServeMetrics(t *testing.T) {
	cfg := standIns(t)
	cfg.Quota = Quota{PerMinute: 1, Burst: 1}
	req := schemas.SearchRequest{Query: "q", Count: 1, Provider: "searxng"}
	nc, resp := serve(t, cfg, "sb-m", req)
	require.Nil(t, resp.Error)
	resp, err := requestSearchAs(nc, "sb-m", req)
	require.NoError(t, err)
	require.NotNil(t, resp.Error)
	resp, err = requestSearchAs(nc, "sb-n", schemas.SearchRequest{Query: "q", Provider: "nope"})
	require.NoError(t, err)
	require.NotNil(t, resp.Error)

	m, err := nc.Request(schemas.ServiceMetricsSubject, nil, 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, Name, m.Header.Get(schemas.HeaderService))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(m.Data))
	require.NoError(t, err, "the answer is the Prometheus text format:\n%s", m.Data)
	instance := report.Instance()
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"sandox_search_requests_total", map[string]string{"provider": "searxng", "code": "ok"}, 1},
		{"sandox_search_requests_total", map[string]string{"provider": "searxng", "code": "resource_exhausted"}, 1},
		{"sandox_search_requests_total", map[string]string{"provider": unknownProvider, "code": "bad_request"}, 1},
		{"sandox_search_request_duration_seconds", map[string]string{"provider": "searxng"}, 2},
	} {
		c.labels[report.InstanceLabel] = instance
		assert.Equal(t, c.want, value(families[c.name], c.labels), "%s%v", c.name, c.labels)
	}
}

// value is the series of f whose labels are exactly labels: a counter's
// value, a histogram's count; 0 when there is none.
func value(f *dto.MetricFamily, labels map[string]string) float64 {
	for _, m := range f.GetMetric() {
		same := len(m.GetLabel()) == len(labels)
		for _, l := range m.GetLabel() {
			same = same && labels[l.GetName()] == l.GetValue()
		}
		switch {
		case !same:
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}
