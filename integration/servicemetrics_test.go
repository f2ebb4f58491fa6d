package integration

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/dashboard"
	"github.com/sandox/sandox/services/data"
	"github.com/sandox/sandox/services/data/populate/dummy"
	"github.com/sandox/sandox/services/metrics"
	"github.com/sandox/sandox/services/metrics/report"
)

// metricsToken is the token the tests' /metrics wants.
const metricsToken = "metrics-token"

// serveMetrics serves the metrics of the test system at a dashboard's
// /metrics, as `sandox dashboard` does, with audit credentials, until the
// test ends, and returns its address.
func serveMetrics(t *testing.T) string {
	t.Helper()
	nc, err := connectAs(auth.RoleAudit)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	exp, err := metrics.New(nc, metrics.Options{NoUsage: true})
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		exp.Run(t.Context())
	}()
	t.Cleanup(func() { <-done })
	dash, err := dashboard.New(nc, dashboard.Options{Token: metricsToken, NoUsage: true, Metrics: exp.Handler()})
	require.NoError(t, err)
	srv := httptest.NewServer(dash.Handler())
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// TestDataServiceMetrics runs a group with a Qdrant-compatible service
// populated from a local file, searches from a sandbox and tries a write
// its grant does not allow, and
// reads the data service's own metrics at the exporter's /metrics (asked
// on schemas.ServiceMetricsSubject with audit credentials): the
// population's progress (every source done, the documents loaded), and
// the requests by database, operation and code with their latency.
func TestDataServiceMetrics(t *testing.T) {
	dir := t.TempDir()
	_, err := dummy.Write(dir)
	require.NoError(t, err)
	cfgPath := filepath.Join(dir, "population.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf("databases:\n  qdrant:\n    handbook:\n      - source: %s/handbook.jsonl\n", dir)), 0o644))
	url := serveMetrics(t)
	instance := report.Instance() // the data service runs in this process
	before := scrapeMetrics(t, url, metricsToken)
	require.Equal(t, 1.0, before.value("sandox_service_instances", "service", data.Name), "the data service answers")
	requests := func(s scrape, op, code string) float64 {
		return s.value("sandox_data_requests_total", "database", "qdrant", "operation", op, "code", code, report.InstanceLabel, instance)
	}

	const group = "it-svc-metrics"
	keepDatabaseVolumes(group)
	g := newGroup(t, sdk.GroupConfig{
		ID: group, Tools: []string{"database_tools"}, PopulationConfig: cfgPath,
		DatabaseAccess: schemas.DatabaseAccess{{Database: schemas.DatabaseQdrant, Namespace: "handbook", Read: true}},
	})
	sources := func(s scrape, state string) float64 {
		return s.value("sandox_data_population_sources", "group", group, "database", "qdrant", "state", state, report.InstanceLabel, instance)
	}
	var populated scrape
	poll.Until(t, 2*time.Minute, "the population to show done at /metrics", func() bool {
		populated = scrapeMetrics(t, url, metricsToken)
		return sources(populated, "total") == 1 && sources(populated, "done") == 1
	})
	assert.Positive(t, populated.value("sandox_data_population_loaded", "group", group, "database", "qdrant", report.InstanceLabel, instance))

	sb := startSandbox(t, g, "it-svc-metrics-sb", sdk.SandboxOptions{})
	mustOK(t, dbAction(t, sb, "database_tools.vector_search", map[string]any{"namespace": "handbook", "query": "zephyrquartz", "top_k": 3}))
	// The sandbox's identity may not publish a write; a request on its
	// write subject from elsewhere (a control connection of the test) is
	// refused by the data service itself, against the recorded grants.
	control, err := connectAs(auth.RoleControl)
	require.NoError(t, err)
	t.Cleanup(control.Close)
	m, err := control.Request(schemas.DatabaseSubject(sb.ID(), schemas.DatabaseQdrant, "handbook", schemas.DatabaseWrite),
		[]byte(`{"op":"upsert","args":{"namespace":"handbook","documents":[{"id":"x","text":"not granted"}]}}`), 10*time.Second)
	require.NoError(t, err)
	var reply schemas.DatabaseReply
	require.NoError(t, json.Unmarshal(m.Data, &reply))
	require.NotNil(t, reply.Error, "the grant is read-only")
	refused := string(reply.Error.Code)

	after := scrapeMetrics(t, url, metricsToken)
	assert.Equal(t, 1.0, requests(after, "search", "ok")-requests(before, "search", "ok"), "searches counted")
	assert.Equal(t, 1.0, requests(after, "upsert", refused)-requests(before, "upsert", refused), "the refused upsert counted with its code")
	latency := func(s scrape) float64 {
		return s.value("sandox_data_request_duration_seconds", "database", "qdrant", "operation", "search", report.InstanceLabel, instance)
	}
	assert.Equal(t, 1.0, latency(after)-latency(before), "the search's latency observed")
}
