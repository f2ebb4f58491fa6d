package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/data/populate/dummy"
)

// TestVectorDatabase runs a group with a Qdrant-compatible service
// populated from a local file, an S3-compatible server the test starts
// (gofakes3 over real HTTP, a stand-in for any S3 store) and an HTTP URL
// the test serves; a sandbox may read namespace handbook and write
// namespace notes.
func TestVectorDatabase(t *testing.T) {
	dir := t.TempDir()
	_, err := dummy.Write(dir)
	require.NoError(t, err)

	backend := s3mem.New()
	s3srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(s3srv.Close)
	require.NoError(t, backend.CreateBucket("corpus"))
	bucketDoc := `{"id":"s3-1","text":"The bucket holds the obsidianwharf ledger."}` + "\n" +
		`{"id":"s3-2","text": not json}` + "\n" +
		`{"id":"s3-3","text":"A third document from the bucket."}` + "\n"
	_, err = backend.PutObject("corpus", "docs/bucket.jsonl", map[string]string{}, bytes.NewReader([]byte(bucketDoc)), int64(len(bucketDoc)), nil)
	require.NoError(t, err)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")

	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# Served\n\nThis page about the marmalade protocol is served by the test over HTTP.\n")
	}))
	t.Cleanup(web.Close)

	yaml := fmt.Sprintf(`s3: {endpoint: %q, region: us-east-1}
databases:
  qdrant:
    handbook:
      - source: %s/handbook.jsonl
      - source: s3://corpus/docs/
      - source: %s/page.md
`, s3srv.URL, dir, web.URL)
	cfgPath := filepath.Join(dir, "vectors.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(yaml), 0o644))

	const group = "it-vec"
	keepDatabaseVolumes(group)
	events := followPopulation(t, group)
	cfg := sdk.GroupConfig{
		ID: group, Tools: []string{"database_tools", "terminal_tools"}, PopulationConfig: cfgPath, KeepDatabaseData: true,
		DatabaseAccess: schemas.DatabaseAccess{
			{Database: schemas.DatabaseQdrant, Namespace: "handbook", Read: true},
			{Database: schemas.DatabaseQdrant, Namespace: "notes", Read: true, Write: true},
		},
	}
	g := newGroup(t, cfg)
	sb := startSandbox(t, g, "it-vec-sb", sdk.SandboxOptions{})

	search := func(t *testing.T, sb *sdk.Sandbox, ns, query, mode string) []schemas.VectorDocument {
		o := dbAction(t, sb, "database_tools.vector_search", map[string]any{"namespace": ns, "query": query, "mode": mode, "top_k": 5})
		mustOK(t, o)
		var docs []schemas.VectorDocument
		require.NoError(t, json.Unmarshal(o.Return, &docs))
		return docs
	}
	t.Run("a malformed row is reported with its line", func(t *testing.T) {
		require.Eventually(t, func() bool { return len(events.bad()) > 0 }, 10*time.Second, 100*time.Millisecond)
		assert.Equal(t, []schemas.RowError{{Source: "s3://corpus/docs/bucket.jsonl", Line: 2, Reason: events.bad()[0].Reason}}, events.bad())
	})
	tests := []struct{ name, query, mode, want string }{
		{"hybrid, local file", "zephyrquartz credentials", "hybrid", "hb-42"},
		{"hybrid, S3 object", "obsidianwharf ledger", "hybrid", "s3-1"},
		{"keyword, HTTP page", "marmalade protocol", "keyword", web.URL + "/page.md#0"},
		{"vector", "zephyrquartz", "vector", "hb-42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := search(t, sb, "handbook", tt.query, tt.mode)
			require.NotEmpty(t, docs)
			assert.Equal(t, tt.want, docs[0].ID)
		})
	}
	t.Run("upsert where granted, denied where not", func(t *testing.T) {
		mustOK(t, dbAction(t, sb, "database_tools.vector_upsert", map[string]any{"namespace": "notes",
			"documents": []map[string]any{{"id": "n1", "text": "my own quillfeather note"}}}))
		assert.Equal(t, "n1", search(t, sb, "notes", "quillfeather", "hybrid")[0].ID)
		o := dbAction(t, sb, "database_tools.vector_upsert", map[string]any{"namespace": "handbook",
			"documents": []map[string]any{{"id": "x", "text": "vandalism"}}})
		require.NotNil(t, o.Error)
		assert.Equal(t, schemas.CodeAccessDenied, o.Error.Code)
		assert.Contains(t, o.Error.Message, "access denied")
	})

	m, err := env.nc.Request(schemas.GroupStatusSubject(group), nil, 5*time.Second)
	require.NoError(t, err)
	var st schemas.StatusReply
	require.NoError(t, json.Unmarshal(m.Data, &st))
	require.Len(t, st.Group.Databases, 1)
	host, port, _ := net.SplitHostPort(st.Group.Databases[0].Address)
	t.Run("no route from the sandbox to the database", func(t *testing.T) {
		out := shell(t, sb, fmt.Sprintf(`python3 -c "
import socket
try:
    socket.create_connection(('%s', %s), timeout=3)
    print('CONNECTED')
except OSError as e:
    print('refused:', e)
"`, host, port))
		assert.NotContains(t, out, "CONNECTED")
	})

	t.Run("a database that dies is started again, with its data", func(t *testing.T) {
		require.NoError(t, env.docker.Kill(t.Context(), st.Group.Databases[0].Container))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			obs, err := sb.SendActions(t.Context(), schemas.Actions{{Tool: "database_tools.vector_search",
				Args: json.RawMessage(`{"namespace":"notes","query":"quillfeather","mode":"keyword","top_k":5}`)}})
			if !assert.NoError(c, err) || !assert.Len(c, obs, 1) {
				return
			}
			o := obs[0]
			if !assert.Nil(c, o.Error, "the search answers again") {
				return
			}
			var docs []schemas.VectorDocument
			assert.NoError(c, json.Unmarshal(o.Return, &docs))
			if assert.NotEmpty(c, docs) {
				assert.Equal(c, "n1", docs[0].ID, "the note written before the crash")
			}
		}, time.Minute, time.Second)
	})

	t.Run("restarting the group duplicates nothing", func(t *testing.T) {
		require.NoError(t, g.End(t.Context()))
		g2 := newGroup(t, cfg)
		sb2 := startSandbox(t, g2, "it-vec-sb2", sdk.SandboxOptions{})
		for _, q := range []string{"zephyrquartz credentials", "obsidianwharf ledger"} {
			seen := map[string]int{}
			for _, d := range search(t, sb2, "handbook", q, "keyword") {
				seen[d.ID]++
			}
			for id, n := range seen {
				assert.Equal(t, 1, n, "%s appears %d times after two populations", id, n)
			}
		}
		assert.Equal(t, "n1", search(t, sb2, "notes", "quillfeather", "keyword")[0].ID, "kept data survives")
	})
}
