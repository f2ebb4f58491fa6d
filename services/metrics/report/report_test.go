package report

import (
	"bytes"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEncode checks that every series Encode writes carries the instance
// label beside its own, in the text format Prometheus' parser reads.
func TestEncode(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_test_total", Help: "Test."}, []string{"op"})
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sandox_test_seconds", Help: "Test.", Buckets: []float64{1}})
	reg.MustRegister(c, h)
	c.WithLabelValues("get").Add(2)
	h.Observe(0.5)

	body, err := Encode(reg, "host-1")
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err, "%s", body)
	require.Len(t, families, 2)
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			assert.Equal(t, "host-1", labels[InstanceLabel], name)
		}
	}
	assert.Equal(t, 2.0, families["sandox_test_total"].GetMetric()[0].GetCounter().GetValue())
	assert.Equal(t, uint64(1), families["sandox_test_seconds"].GetMetric()[0].GetHistogram().GetSampleCount())
}
