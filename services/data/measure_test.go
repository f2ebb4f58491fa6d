package data

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/data/populate"
)

// TestMeasureRequests checks the labels a request is counted under: the
// database and operation it names when the service knows them, list for a
// request for the grants, (unknown) for what the service does not know.
func TestMeasureRequests(t *testing.T) {
	rd := schemas.DatabaseSubject("sb", schemas.DatabaseQdrant, "ns", schemas.DatabaseRead)
	tests := []struct {
		name, subject, payload    string
		reply                     schemas.DatabaseReply
		database, operation, code string
	}{
		{name: "search", subject: rd, payload: `{"op":"search"}`, database: "qdrant", operation: "search", code: "ok"},
		{name: "graph query refused", subject: schemas.DatabaseSubject("sb", schemas.DatabaseNeo4j, "ns", schemas.DatabaseRead),
			payload: `{"op":"write_query"}`, reply: schemas.DatabaseReply{Error: schemas.Errorf(schemas.CodeAccessDenied, "no")},
			database: "neo4j", operation: "write_query", code: "access_denied"},
		{name: "list", subject: schemas.DatabaseListSubject("sb"), database: unknownLabel, operation: listOperation, code: "ok"},
		{name: "an operation of the other database", subject: rd, payload: `{"op":"add_node"}`, database: "qdrant", operation: unknownLabel, code: "ok"},
		{name: "a payload that does not decode", subject: rd, payload: `{`, database: "qdrant", operation: unknownLabel, code: "ok"},
		{name: "an unknown database", subject: "sandox.db.sb.mongo.ns.read", payload: `{"op":"search"}`, database: unknownLabel, operation: unknownLabel, code: "ok"},
		{name: "not a database subject", subject: "elsewhere", database: unknownLabel, operation: unknownLabel, code: "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMeasures()
			m.request(tt.subject, []byte(tt.payload), tt.reply, 10*time.Millisecond)
			assert.Equal(t, 1.0, read(t, m.requests.WithLabelValues(tt.database, tt.operation, tt.code)))
			assert.Equal(t, 1, count(m.duration))
		})
	}
}

// TestMeasurePopulation follows a population of two qdrant sources and
// one neo4j source into the gauges, and checks that populating the group
// again starts them over.
func TestMeasurePopulation(t *testing.T) {
	cfg := populate.Config{Databases: map[string]map[string][]populate.Source{
		schemas.DatabaseQdrant: {"a": {{Source: "one.jsonl"}}, "b": {{Source: "two.jsonl"}}},
		schemas.DatabaseNeo4j:  {"g": {{Source: "nodes.csv"}}},
	}}
	m := newMeasures()
	run := m.population("grp", cfg)
	sources := func(db, state string) float64 {
		return read(t, m.popSources.WithLabelValues("grp", db, state))
	}
	assert.Equal(t, 2.0, sources("qdrant", "total"))
	assert.Equal(t, 1.0, sources("neo4j", "total"))
	assert.Equal(t, 0.0, sources("qdrant", "done"))

	run.progress(schemas.PopulationEvent{GroupID: "grp", Database: "qdrant", Namespace: "a", Source: "one.jsonl", Loaded: 64})
	run.progress(schemas.PopulationEvent{GroupID: "grp", Database: "qdrant", Namespace: "a", Source: "one.jsonl", Loaded: 100,
		Bad: []schemas.RowError{{Line: 3}}, Done: true})
	run.progress(schemas.PopulationEvent{GroupID: "grp", Database: "qdrant", Namespace: "b", Source: "two.jsonl", Loaded: 10})
	assert.Equal(t, 1.0, sources("qdrant", "done"))
	assert.Equal(t, 110.0, read(t, m.popRows.WithLabelValues("grp", "qdrant")))
	assert.Equal(t, 1.0, read(t, m.popBad.WithLabelValues("grp", "qdrant")))
	assert.Equal(t, 0.0, sources("neo4j", "done"))
	run.end(nil)
	assert.Equal(t, 1.0, read(t, m.populations.WithLabelValues("ok")))

	m.population("grp", populate.Config{Databases: map[string]map[string][]populate.Source{
		schemas.DatabaseNeo4j: {"g": {{Source: "nodes.csv"}}},
	}})
	assert.Equal(t, 2, count(m.popSources), "the group's qdrant gauges went with its previous population")
	assert.Equal(t, 0.0, read(t, m.popRows.WithLabelValues("grp", "neo4j")))
}

// read is the value of a counter or gauge.
func read(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetCounter().GetValue() + d.GetGauge().GetValue()
}

// count is how many series c holds.
func count(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric)
	go func() {
		c.Collect(ch)
		close(ch)
	}()
	n := 0
	for range ch {
		n++
	}
	return n
}
