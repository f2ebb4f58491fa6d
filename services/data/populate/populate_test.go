package populate_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/egress"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/data"
	"github.com/sandox/sandox/services/data/neo4jtest"
	"github.com/sandox/sandox/services/data/populate"
	"github.com/sandox/sandox/services/data/populate/dummy"
)

// memVectors keeps documents by point id, as Qdrant does; used when no
// Qdrant is configured (SANDOX_TEST_QDRANT), to check what the population
// writes. integration/TestDatabases runs the same on the real service.
type memVectors struct {
	mu   sync.Mutex
	docs map[string]schemas.VectorDocument
}

func (m *memVectors) Upsert(_ context.Context, ns string, docs []schemas.VectorDocument) (schemas.VectorResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range docs {
		m.docs[data.PointID(ns, d.ID)] = d
	}
	return schemas.VectorResult{Upserted: len(docs)}, nil
}

// S3Stub starts an S3-compatible server over real HTTP on loopback: a
// stand-in for any S3 store (gofakes3, in memory).
func startS3(t *testing.T, objects map[string]string) string {
	t.Helper()
	backend := s3mem.New()
	faker := gofakes3.New(backend)
	srv := httptest.NewServer(faker.Server())
	t.Cleanup(srv.Close)
	require.NoError(t, backend.CreateBucket("corpus"))
	for k, v := range objects {
		_, err := backend.PutObject("corpus", k, map[string]string{}, bytes.NewReader([]byte(v)), int64(len(v)), nil)
		require.NoError(t, err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	return srv.URL
}

func TestPopulate(t *testing.T) {
	ctx := context.Background()
	neo, err := neo4jtest.Start(ctx)
	require.NoError(t, err)
	t.Cleanup(neo.Stop)
	graph, err := data.OpenGraph(ctx, neo.Address, neo.Password)
	require.NoError(t, err)
	t.Cleanup(func() { _ = graph.Close(ctx) })

	dir := t.TempDir()
	_, err = dummy.Write(dir)
	require.NoError(t, err)
	endpoint := startS3(t, map[string]string{
		"docs/a.jsonl": `{"id":"s3-1","text":"first from the bucket"}` + "\n" +
			`{"id":"s3-2","text":"second from the bucket","metadata":{"k":"v"}}` + "\n" +
			`{"id":"s3-3","text": broken}` + "\n" +
			`{"id":"s3-4","text":"after the broken row"}` + "\n",
		"docs/b.json":   "[\n  {\"id\": \"s3-5\", \"text\": \"from a JSON array\"},\n  {\"text\": \"no id here\"}\n]\n",
		"other/c.jsonl": `{"id":"not-loaded","text":"outside the prefix"}` + "\n",
	})
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/notes.md" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "# Notes\n\nServed over HTTP by the test.\n\n## More\n\nA second section.\n")
	}))
	t.Cleanup(web.Close)

	cfgText := fmt.Sprintf(`
s3: {endpoint: %q, region: us-east-1}
databases:
  qdrant:
    docs:
      - source: handbook.jsonl
      - source: s3://corpus/docs/
      - source: %s/notes.md
      - source: %s/missing.md
  neo4j:
    kg:
      - {source: kg-nodes.csv, format: nodes}
      - {source: kg-rels.csv, format: relationships}
      - source: kg.cypher
`, endpoint, web.URL, web.URL)
	cfg, err := populate.Parse(cfgText)
	require.NoError(t, err)

	var sink populate.VectorSink
	mem := &memVectors{docs: map[string]schemas.VectorDocument{}}
	sink = mem
	if addr := os.Getenv("SANDOX_TEST_QDRANT"); addr != "" {
		v, err := data.OpenVectors(ctx, addr, data.HashEmbedder{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = v.Close() })
		sink = v
	}
	var events []schemas.PopulationEvent
	var mu sync.Mutex
	r := &populate.Runner{GroupID: "g", Vectors: sink, Graph: graph, Dir: dir, BatchSize: 50,
		Progress: func(e schemas.PopulationEvent) { mu.Lock(); events = append(events, e); mu.Unlock() }}

	for run := 1; run <= 2; run++ {
		t.Run(fmt.Sprintf("run %d", run), func(t *testing.T) {
			out, err := r.Run(ctx, cfg)
			require.NoError(t, err)
			got := map[string]schemas.PopulationEvent{}
			for _, e := range out {
				got[e.Source] = e
				assert.True(t, e.Done)
			}
			assert.Equal(t, dummy.Documents, got["handbook.jsonl"].Loaded)
			assert.Empty(t, got["handbook.jsonl"].Bad)

			s3 := got["s3://corpus/docs/"]
			assert.Equal(t, 4, s3.Loaded, "a.jsonl's three good rows and b.json's one")
			assert.Contains(t, s3.Bad, schemas.RowError{Source: "s3://corpus/docs/a.jsonl", Line: 3, Reason: s3.Bad[0].Reason})
			require.Len(t, s3.Bad, 2)
			assert.Contains(t, s3.Bad[0].Reason, "invalid JSON")
			assert.Equal(t, schemas.RowError{Source: "s3://corpus/docs/b.json", Line: 3, Reason: "no id"}, s3.Bad[1])

			assert.Equal(t, 2, got[web.URL+"/notes.md"].Loaded, "two Markdown sections")
			require.Len(t, got[web.URL+"/missing.md"].Bad, 1)
			assert.Contains(t, got[web.URL+"/missing.md"].Bad[0].Reason, "404")

			assert.Equal(t, 8, got["kg-nodes.csv"].Loaded)
			assert.Equal(t, 7, got["kg-rels.csv"].Loaded)
			assert.Equal(t, 4, got["kg.cypher"].Loaded)
			assert.Empty(t, got["kg.cypher"].Bad)

			// Nothing duplicated by the second run.
			if sink == mem {
				assert.Equal(t, dummy.Documents+4+2, len(mem.docs))
			} else {
				n, err := sink.(*data.Vectors).Count(ctx, "docs")
				require.NoError(t, err)
				assert.EqualValues(t, dummy.Documents+4+2, n)
			}
			res, err := graph.Query(ctx, "kg", schemas.GraphQueryArgs{Query: "MATCH (n:Person) RETURN count(n) AS people"}, false)
			require.NoError(t, err)
			assert.EqualValues(t, 4, res.Rows[0]["people"])
			res, err = graph.Query(ctx, "kg", schemas.GraphQueryArgs{Query: "MATCH (p:Person)-[r]->(x) RETURN count(r) AS rels"}, false)
			require.NoError(t, err)
			assert.EqualValues(t, 7+5, res.Rows[0]["rels"])
		})
	}
	assert.NotEmpty(t, events)
	if sink == mem {
		d := mem.docs[data.PointID("docs", "s3-4")]
		assert.Equal(t, "after the broken row", d.Text, "the row after a bad one loads")
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct{ name, yaml string }{
		{"unknown database", "databases: {mysql: {x: [{source: a.csv}]}}"},
		{"bad namespace", "databases: {qdrant: {'a.b': [{source: a.csv}]}}"},
		{"unknown field", "databases: {qdrant: {a: [{source: a.csv, colour: red}]}}"},
		{"no source", "databases: {qdrant: {a: [{format: csv}]}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := populate.Parse(tt.yaml)
			require.ErrorIs(t, err, schemas.CodeBadRequest)
		})
	}
}

func TestLocalSourcesStayInTheDirectory(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("the control plane's secret"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("fine to load"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.txt")))
	mem := &memVectors{docs: map[string]schemas.VectorDocument{}}
	r := &populate.Runner{GroupID: "g", Vectors: mem, Dir: dir}
	cfg, err := populate.Parse(fmt.Sprintf("databases: {qdrant: {ns: [{source: ok.txt}, {source: %s/secret.txt}, {source: ../%s/secret.txt}, {source: link.txt}]}}",
		outside, filepath.Base(outside)))
	require.NoError(t, err)
	out, err := r.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, out, 4)
	assert.Equal(t, 1, out[0].Loaded)
	for _, e := range out[1:] {
		assert.Zero(t, e.Loaded, e.Source)
		require.Len(t, e.Bad, 1, e.Source)
		assert.Contains(t, e.Bad[0].Reason, "outside the population directory")
	}
	assert.Len(t, mem.docs, 1)
}

// TestLocalSourceMissing shows the reason a missing local source gives:
// the path that was looked for, and the directory local sources are read
// from, for a relative and an absolute source.
func TestLocalSourceMissing(t *testing.T) {
	dir := t.TempDir()
	mem := &memVectors{docs: map[string]schemas.VectorDocument{}}
	r := &populate.Runner{GroupID: "g", Vectors: mem, Dir: dir}
	cfg, err := populate.Parse(fmt.Sprintf("databases: {qdrant: {ns: [{source: corpus/missing.jsonl}, {source: %s/gone.md}]}}", dir))
	require.NoError(t, err)
	out, err := r.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, out, 2)
	for i, path := range []string{filepath.Join(dir, "corpus", "missing.jsonl"), filepath.Join(dir, "gone.md")} {
		require.Len(t, out[i].Bad, 1, out[i].Source)
		assert.Equal(t, fmt.Sprintf("source %s: no file %s: local sources are read from the population directory %s (SANDOX_POPULATE_DIR; `sandox up` binds the same path of its host)",
			out[i].Source, path, dir), out[i].Bad[0].Reason)
	}
}

// TestURLSourcesOnTheAllowlist shows URL sources whose host the allowlist
// refuses reported and skipped, nothing fetched, while an allowed one
// loads; and a redirect from an allowed host to one that is not refused
// where the client dials, as the data service runs it (egress.Allowlist).
func TestURLSourcesOnTheAllowlist(t *testing.T) {
	var fetched atomic.Int32
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		if r.URL.Path == "/redirect.md" {
			// To the same server by its address, which is not listed.
			http.Redirect(w, r, "http://127.0.0.1"+port(r.Host)+"/ok.md", http.StatusFound)
			return
		}
		fmt.Fprint(w, "# Allowed\n\nFetched over HTTP.\n")
	}))
	t.Cleanup(web.Close)
	p := port(web.Listener.Addr().String())
	allow, err := egress.ParseAllowlist([]string{"localhost"})
	require.NoError(t, err)
	mem := &memVectors{docs: map[string]schemas.VectorDocument{}}
	r := &populate.Runner{GroupID: "g", Vectors: mem, Dir: t.TempDir(), Allow: allow.Allows, Dial: allow.DialContext}
	cfg, err := populate.Parse(fmt.Sprintf(`
s3: {endpoint: "http://127.0.0.1%s"}
databases:
  qdrant:
    ns:
      - source: http://localhost%s/ok.md
      - source: http://127.0.0.1%s/refused.md
      - source: s3://bucket/docs/
      - source: http://localhost%s/redirect.md
`, p, p, p, p))
	require.NoError(t, err)
	out, err := r.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, out, 4)
	assert.Equal(t, 1, out[0].Loaded, "the allowed host")
	for _, e := range out[1:3] {
		assert.Zero(t, e.Loaded, e.Source)
		require.Len(t, e.Bad, 1, e.Source)
		assert.Contains(t, e.Bad[0].Reason, `host not on the population allowlist (SANDOX_POPULATE_ALLOW): "127.0.0.1"`, e.Source)
	}
	assert.Zero(t, out[3].Loaded, "the redirect")
	require.Len(t, out[3].Bad, 1)
	assert.Contains(t, out[3].Bad[0].Reason, egress.ErrDenied.Error())
	assert.Equal(t, int32(2), fetched.Load(), "only the allowed source and the redirect reached the server")
}

// port returns ":port" of a host:port.
func port(hostport string) string { return hostport[strings.LastIndex(hostport, ":"):] }
