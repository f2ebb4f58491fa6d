package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/metrics"
)

// scrape is one reading of /metrics, parsed.
type scrape map[string]*dto.MetricFamily

// value returns the series of name with exactly labels (pairs of name and
// value): a counter's or gauge's value, a histogram's count; 0 when it is
// not exported.
func (s scrape) value(name string, labels ...string) float64 {
	f, ok := s[name]
	if !ok {
		return 0
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		same := true
		for _, l := range m.GetLabel() {
			same = same && want[l.GetName()] == l.GetValue()
		}
		if !same {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

// scrapeMetrics reads url (a /metrics address) with the bearer token and
// parses the Prometheus text format.
func scrapeMetrics(t *testing.T, url, token string) scrape {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "body %s", body)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err, "the exposition parses")
	return families
}

// TestMetrics serves the metrics of the test system at the dashboard's
// /metrics, as `sandox dashboard` does, with audit credentials. A sandbox
// created and a batch of a succeeding and a failing action sent through
// the SDK, and a create refused for more CPUs than the host has, show in
// the histogram of action latency by tool, the actions by tool and error
// class, the commands by kind and code, the admission refusals and the
// sandboxes by state; and, read with client credentials, the sandbox's live
// use by sandbox and by group.
func TestMetrics(t *testing.T) {
	url := serveMetrics(t)
	ctx := t.Context()

	// caughtUp waits until the exporter has counted the whole audit stream.
	js, err := jetstream.New(env.nc)
	require.NoError(t, err)
	caughtUp := func(what string) scrape {
		t.Helper()
		var s scrape
		poll.Until(t, 30*time.Second, what, func() bool {
			stream, err := js.Stream(ctx, schemas.EventStream)
			require.NoError(t, err)
			s = scrapeMetrics(t, url, metricsToken)
			return s.value("sandox_up", "source", "audit_stream") == 1 &&
				s.value("sandox_audit_stream_sequence") >= float64(stream.CachedInfo().State.LastSeq)
		})
		return s
	}
	before := caughtUp("the exporter to read the audit stream")

	group := newGroup(t, sdk.GroupConfig{ID: "it-metrics"})
	sb := startSandbox(t, group, "it-metrics-1", sdk.SandboxOptions{})
	obs := send(t, sb, `[
		{"tool": "terminal_tools.run", "args": {"command": "echo counted"}},
		{"tool": "filesystem_tools.read_file", "args": {"path": "nope.txt"}}
	]`)
	require.Len(t, obs, 2)
	mustOK(t, obs[0])
	require.NotNil(t, obs[1].Error, "reading a missing file fails")
	failed := string(obs[1].Error.Code)
	_, err = group.CreateSandbox(ctx, "it-metrics-big", sdk.SandboxOptions{ComputeResources: &schemas.ComputeResources{CPU: "512"}})
	require.ErrorIs(t, err, sdk.ErrResourceExhausted)

	after := caughtUp("the exporter to count the new entries")
	delta := func(name string, labels ...string) float64 {
		return after.value(name, labels...) - before.value(name, labels...)
	}
	host := sb.Status().Host
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"sandox_action_duration_seconds", []string{"tool", "terminal_tools.run"}, 1},
		{"sandox_action_duration_seconds", []string{"tool", "filesystem_tools.read_file"}, 1},
		{"sandox_actions_total", []string{"tool", "terminal_tools.run", "code", "ok"}, 1},
		{"sandox_actions_total", []string{"tool", "filesystem_tools.read_file", "code", failed}, 1},
		{"sandox_batches_total", []string{"code", "ok"}, 1},
		{"sandox_admission_refusals_total", []string{"kind", "create_sandbox"}, 1},
		{"sandox_commands_total", []string{"kind", "create_sandbox", "code", "resource_exhausted"}, 1},
		{"sandox_commands_total", []string{"kind", "create_sandbox", "code", "ok"}, 1},
		{"sandox_commands_total", []string{"kind", "start_sandbox", "code", "ok"}, 1},
		{"sandox_sandbox_events_total", []string{"kind", "created"}, 1},
		{"sandox_sandboxes", []string{"state", "running", "host", host}, 1},
	} {
		assert.Equal(t, c.want, delta(c.name, c.labels...), "%s%v: after %v, before %v", c.name, c.labels,
			after.value(c.name, c.labels...), before.value(c.name, c.labels...))
	}
	assert.Equal(t, 1.0, after.value("sandox_up", "source", "buckets"))
	builds := delta("sandox_image_builds_total", "outcome", "built") + delta("sandox_image_builds_total", "outcome", "reused")
	assert.Equal(t, 1.0, builds, "the created sandbox's image was built or reused")

	t.Run("live use with client credentials", func(t *testing.T) {
		exp, err := metrics.New(env.nc, metrics.Options{UsageBySandbox: true})
		require.NoError(t, err)
		families, err := exp.Gatherer().Gather()
		require.NoError(t, err)
		s := scrape{}
		for _, f := range families {
			s[f.GetName()] = f
		}
		assert.Positive(t, s.value("sandox_sandbox_memory_bytes", "group", "it-metrics", "sandbox", "it-metrics-1"), "the sandbox's memory")
		assert.GreaterOrEqual(t, s.value("sandox_sandbox_processes", "group", "it-metrics", "sandbox", "it-metrics-1"), 1.0, "the executor at least")
		assert.GreaterOrEqual(t, s.value("sandox_group_memory_bytes", "group", "it-metrics"), s.value("sandox_sandbox_memory_bytes", "group", "it-metrics", "sandbox", "it-metrics-1"))
	})
}
