package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/data/populate/dummy"
)

// dbAction runs one tool call and returns its observation.
func dbAction(t *testing.T, sb *sdk.Sandbox, tool string, args any) schemas.Observation {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	obs, err := sb.SendActions(t.Context(), schemas.Actions{{Tool: tool, Args: raw}})
	require.NoError(t, err)
	require.Len(t, obs, 1)
	return obs[0]
}

// populationEvents collects the population events of a group.
type populationEvents struct {
	mu  sync.Mutex
	all []schemas.PopulationEvent
}

func followPopulation(t *testing.T, group string) *populationEvents {
	t.Helper()
	p := &populationEvents{}
	sub, err := env.nc.Subscribe(schemas.PopulationEventSubject(group), func(m *nats.Msg) {
		var e schemas.PopulationEvent
		if json.Unmarshal(m.Data, &e) == nil {
			p.mu.Lock()
			p.all = append(p.all, e)
			p.mu.Unlock()
		}
	})
	require.NoError(t, err)
	require.NoError(t, env.nc.Flush())
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return p
}

func (p *populationEvents) bad() []schemas.RowError {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []schemas.RowError
	for _, e := range p.all {
		if e.Done {
			out = append(out, e.Bad...)
		}
	}
	return out
}

// TestDatabases runs a group with a Neo4j (the image built here) populated
// from local files, and a sandbox granted read on one graph namespace and
// read_write on another.
func TestDatabases(t *testing.T) {
	// One of the package's longest tests (it starts Neo4j twice), on its own
	// group: it runs beside the other parallel ones (see doc.go).
	t.Parallel()
	dir := t.TempDir()
	_, err := dummy.Write(dir)
	require.NoError(t, err)
	// Another namespace's secret, and a file with a malformed row.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.cypher"),
		[]byte("MERGE (s:Person {id: 'mole', name: 'The mole', code: 'launch-4711'});\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "more-nodes.csv"),
		[]byte("id,labels,name\nlin,Person,Barbara Liskov\nbad,Not-A-Label,broken\nken,Person,Ken Thompson\n"), 0o644))
	yaml := fmt.Sprintf(`databases:
  neo4j:
    kg:
      - {source: %[1]s/kg-nodes.csv, format: nodes}
      - {source: %[1]s/kg-rels.csv, format: relationships}
      - source: %[1]s/kg.cypher
      - {source: %[1]s/more-nodes.csv, format: nodes}
    secret:
      - source: %[1]s/secret.cypher
`, dir)
	cfgPath := filepath.Join(dir, "population.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(yaml), 0o644))

	const group = "it-db"
	keepDatabaseVolumes(group)
	events := followPopulation(t, group)
	grants := schemas.DatabaseAccess{
		{Database: schemas.DatabaseNeo4j, Namespace: "kg", Read: true},
		{Database: schemas.DatabaseNeo4j, Namespace: "scratch", Read: true, Write: true},
	}
	cfg := sdk.GroupConfig{
		ID: group, Tools: []string{"database_tools", "terminal_tools"},
		DatabaseAccess: grants, PopulationConfig: cfgPath, KeepDatabaseData: true,
		// The secret namespace is loaded, though no sandbox is granted it.
	}
	g := newGroup(t, cfg)
	sb := startSandbox(t, g, "it-db-sb", sdk.SandboxOptions{})

	m, err := env.nc.Request(schemas.GroupStatusSubject(group), nil, 5*time.Second)
	require.NoError(t, err)
	var st schemas.StatusReply
	require.NoError(t, json.Unmarshal(m.Data, &st))
	require.NotNil(t, st.Group)
	require.Len(t, st.Group.Databases, 1)
	neo := st.Group.Databases[0]
	assert.Equal(t, schemas.DatabaseNeo4j, neo.Database)

	t.Run("a malformed row is reported with its line", func(t *testing.T) {
		require.Eventually(t, func() bool { return len(events.bad()) > 0 }, 10*time.Second, 100*time.Millisecond)
		bad := events.bad()
		require.Len(t, bad, 1)
		assert.Equal(t, 3, bad[0].Line)
		assert.Equal(t, dir+"/more-nodes.csv", bad[0].Source)
		assert.Contains(t, bad[0].Reason, "Not-A-Label")
	})

	people := func(t *testing.T, sb *sdk.Sandbox) []string {
		o := dbAction(t, sb, "database_tools.graph_query", map[string]any{"namespace": "kg", "query": "MATCH (p:Person) RETURN p.name AS name ORDER BY name"})
		mustOK(t, o)
		var r schemas.GraphResult
		require.NoError(t, json.Unmarshal(o.Return, &r))
		var names []string
		for _, row := range r.Rows {
			names = append(names, row["name"].(string))
		}
		return names
	}
	want := []string{"Ada Lovelace", "Alan Turing", "Barbara Liskov", "Edsger Dijkstra", "Grace Hopper", "Ken Thompson"}

	t.Run("reads where granted", func(t *testing.T) {
		assert.Equal(t, want, people(t, sb), "the rows around the bad one loaded; no other namespace's people")
		o := dbAction(t, sb, "database_tools.graph_shortest_path", map[string]any{"namespace": "kg", "from": "ada", "to": "edsger", "types": []string{"INSPIRED", "KNOWS"}})
		mustOK(t, o)
		assert.Contains(t, o.Stdout, "-[:INSPIRED]->")
	})

	t.Run("writes where granted", func(t *testing.T) {
		mustOK(t, dbAction(t, sb, "database_tools.graph_add_node", map[string]any{"namespace": "scratch", "id": "n1", "labels": []string{"Note"}, "properties": map[string]any{"text": "mine"}}))
		o := dbAction(t, sb, "database_tools.graph_query", map[string]any{"namespace": "scratch", "query": "MATCH (n:Note) RETURN n.text AS text"})
		mustOK(t, o)
		assert.Contains(t, o.Stdout, "mine")
	})

	denied := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"write on a read grant", "database_tools.graph_add_node", map[string]any{"namespace": "kg", "id": "x", "labels": []string{"Person"}}},
		{"write query on a read grant", "database_tools.graph_write", map[string]any{"namespace": "kg", "query": "MATCH (p:Person) SET p.name = 'x'"}},
		{"ungranted namespace", "database_tools.graph_query", map[string]any{"namespace": "secret", "query": "MATCH (p:Person) RETURN p.code"}},
		{"crafted cypher: all nodes", "database_tools.graph_query", map[string]any{"namespace": "kg", "query": "MATCH (n) RETURN n.code"}},
		{"crafted cypher: by property", "database_tools.graph_query", map[string]any{"namespace": "kg", "query": "MATCH (n:Person) WHERE n.ns = 'secret' RETURN n.code"}},
		{"crafted cypher: other label", "database_tools.graph_query", map[string]any{"namespace": "kg", "query": "MATCH (n:NS_secret) RETURN n.code"}},
		{"crafted cypher: subquery", "database_tools.graph_query", map[string]any{"namespace": "kg", "query": "MATCH (p:Person) CALL { MATCH (m) RETURN m } RETURN m.code"}},
	}
	for _, tt := range denied {
		t.Run("denied: "+tt.name, func(t *testing.T) {
			o := dbAction(t, sb, tt.tool, tt.args)
			require.NotNil(t, o.Error, "stdout %q", o.Stdout)
			assert.Equal(t, schemas.CodeAccessDenied, o.Error.Code)
			assert.Contains(t, o.Error.Message, "access denied")
			assert.NotContains(t, o.Stdout+o.Error.Message, "launch-4711")
		})
	}

	t.Run("no route from the sandbox to the database", func(t *testing.T) {
		probe := fmt.Sprintf(`python3 -c "
import socket
try:
    socket.create_connection(('%s', %s), timeout=3)
    print('CONNECTED')
except OSError as e:
    print('refused:', e)
"`, strings.Split(neo.Address, ":")[0], strings.Split(neo.Address, ":")[1])
		out := shell(t, sb, probe)
		assert.NotContains(t, out, "CONNECTED")
		assert.Contains(t, out, "refused")
	})

	t.Run("restarting the group duplicates nothing", func(t *testing.T) {
		require.NoError(t, g.End(t.Context()))
		g2 := newGroup(t, cfg)
		sb2 := startSandbox(t, g2, "it-db-sb2", sdk.SandboxOptions{})
		assert.Equal(t, want, people(t, sb2))
		o := dbAction(t, sb2, "database_tools.graph_query", map[string]any{"namespace": "scratch", "query": "MATCH (n:Note) RETURN count(n) AS notes"})
		mustOK(t, o)
		assert.Contains(t, o.Stdout, `{"notes":1}`, "kept data survives the restart")
		o = dbAction(t, sb2, "database_tools.graph_query", map[string]any{"namespace": "kg", "query": "MATCH (p:Person)-[r]->() RETURN count(r) AS rels"})
		mustOK(t, o)
		assert.Contains(t, o.Stdout, `{"rels":12}`)
	})
}
