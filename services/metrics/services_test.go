package metrics

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/metrics/report"
)

// answerMetrics makes a service instance's registry with one counter at
// n, answering the exporter as service (report.Answer) until the test ends.
func answerMetrics(t *testing.T, nc *nats.Conn, service, instance string, n float64) {
	t.Helper()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_test_requests_total", Help: "Test requests."}, []string{"op"})
	reg.MustRegister(c)
	c.WithLabelValues("get").Add(n)
	sub, err := report.Answer(nc, service, instance, reg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	require.NoError(t, nc.Flush())
}

// TestServiceMetrics checks that the exporter gathers the metrics every
// instance of a service answers on schemas.ServiceMetricsSubject, each
// series labelled with its instance, counts the instances by service, and
// keeps the others' metrics when one answers what does not parse.
func TestServiceMetrics(t *testing.T) {
	s := startSystem(t)
	g := s.exp.Gatherer()
	assert.False(t, gather(t, g, instancesName, "service", "data").found, "no instance answers yet")

	answerMetrics(t, s.nc, "data", "host-a-1", 3)
	answerMetrics(t, s.nc, "data", "host-b-1", 5)
	answerMetrics(t, s.nc, "search", "host-c-1", 0)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"sandox_test_requests_total", []string{"op", "get", report.InstanceLabel, "host-a-1"}, 3},
		{"sandox_test_requests_total", []string{"op", "get", report.InstanceLabel, "host-b-1"}, 5},
		{instancesName, []string{"service", "data"}, 2},
		{instancesName, []string{"service", "search"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := gather(t, g, c.name, c.labels...)
			require.True(t, got.found, "%s%v is exported", c.name, c.labels)
			assert.Equal(t, c.want, got.value, "%s%v", c.name, c.labels)
		})
	}
	t.Run("the exporter's own metrics stay", func(t *testing.T) {
		assert.True(t, gather(t, g, "sandox_up", "source", "buckets").found)
	})

	t.Run("an answer that does not parse", func(t *testing.T) {
		sub, err := s.nc.Subscribe(schemas.ServiceMetricsSubject, func(m *nats.Msg) { _ = m.Respond([]byte("not { metrics")) })
		require.NoError(t, err)
		t.Cleanup(func() { _ = sub.Unsubscribe() })
		require.NoError(t, s.nc.Flush())
		families, err := g.Gather()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the metrics of service")
		var names []string
		for _, f := range families {
			names = append(names, f.GetName())
		}
		assert.Contains(t, names, "sandox_test_requests_total", "the others' metrics are kept")
	})
}
