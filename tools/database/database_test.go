package database

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/data"
	"github.com/sandox/sandox/services/data/neo4jtest"
	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/tools"
)

// TestToolsThroughTheDataService runs the tools as a sandbox's executor
// does: over a sandbox identity minted with its grants, against the real
// data service and a real Neo4j.
func TestToolsThroughTheDataService(t *testing.T) {
	ctx := context.Background()
	neo, err := neo4jtest.Start(ctx)
	require.NoError(t, err)
	t.Cleanup(neo.Stop)

	a, err := auth.NewAuthority()
	require.NoError(t, err)
	srv := natstest.Start(t, func(c *natsd.Config) { c.Auth = a })
	connect := func(role auth.Role, sandbox string, grants ...schemas.DatabaseGrant) *nats.Conn {
		creds, err := a.Mint("test", role, sandbox, grants...)
		require.NoError(t, err)
		opts := []nats.Option{creds.Option()}
		if sandbox != "" {
			opts = append(opts, nats.CustomInboxPrefix(schemas.SandboxInboxPrefix(sandbox)))
		}
		nc, err := nats.Connect(srv.ClientURL(), opts...)
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		return nc
	}
	js, err := jetstream.New(connect(auth.RoleControl, ""))
	require.NoError(t, err)
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: schemas.SandboxBucket})
	require.NoError(t, err)
	_, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: schemas.GroupBucket})
	require.NoError(t, err)
	grants := schemas.DatabaseAccess{
		{Database: schemas.DatabaseNeo4j, Namespace: "pub", Read: true},
		{Database: schemas.DatabaseNeo4j, Namespace: "work", Read: true, Write: true},
	}
	st, _ := json.Marshal(schemas.SandboxStatus{ID: "sb-t", GroupID: "g", State: schemas.StateRunning, Databases: grants})
	_, err = kv.Put(ctx, "sb-t", st)
	require.NoError(t, err)

	dnc := connect(auth.RoleData, "")
	djs, err := jetstream.New(dnc)
	require.NoError(t, err)
	svc, err := data.New(ctx, djs, data.Config{Neo4jPassword: neo.Password, Endpoints: map[string]string{schemas.DatabaseNeo4j: neo.Address}}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- svc.Serve(sctx, dnc) }()
	t.Cleanup(func() { cancel(); <-done })
	time.Sleep(100 * time.Millisecond)

	sb := connect(auth.RoleSandbox, "sb-t", grants...)
	opened, err := Open(ctx, tools.Env{
		Executor: schemas.ExecutorEnv{SandboxID: "sb-t"},
		Log:      slog.New(slog.DiscardHandler),
		Request: func(ctx context.Context, subject string, data []byte) ([]byte, error) {
			m, err := sb.RequestWithContext(ctx, subject, data)
			if err != nil {
				return nil, err
			}
			return m.Data, nil
		},
	})
	require.NoError(t, err)
	byName := map[string]tools.Tool{}
	for _, tl := range opened.Tools {
		byName[tl.Name] = tl
	}
	call := func(name, args string) (tools.Result, error) {
		tl, ok := byName[name]
		require.True(t, ok, name)
		return tl.Call(ctx, json.RawMessage(args))
	}

	res, err := call("list_namespaces", `{}`)
	require.NoError(t, err)
	assert.Contains(t, res.Stdout, "neo4j/work read_write")

	tests := []struct {
		name, tool, args string
		wantCode         schemas.ErrorCode
		wantOut          string
	}{
		{"add a node where granted", "graph_add_node", `{"namespace":"work","id":"t1","labels":["Task"],"properties":{"title":"write docs"}}`, "", "created 1 nodes"},
		{"add a second", "graph_add_node", `{"namespace":"work","id":"t2","labels":["Task"]}`, "", ""},
		{"relate them", "graph_add_relationship", `{"namespace":"work","from":"t1","to":"t2","type":"BLOCKS"}`, "", "created 0 nodes, 1 relationships"},
		{"read them back", "graph_query", `{"namespace":"work","query":"MATCH (t:Task {title: $x}) RETURN t.title AS title","params":{"x":"write docs"}}`, "", `{"title":"write docs"}`},
		{"neighbours", "graph_neighbours", `{"namespace":"work","id":"t1"}`, "", "(t1)-[:BLOCKS]->(t2)"},
		{"path", "graph_shortest_path", `{"namespace":"work","from":"t2","to":"t1"}`, "", "(t1)-[:BLOCKS]->(t2)"},
		{"write on a read grant", "graph_add_node", `{"namespace":"pub","id":"x"}`, schemas.CodeAccessDenied, ""},
		{"write query on a read grant", "graph_write", `{"namespace":"pub","query":"CREATE (n:X)"}`, schemas.CodeAccessDenied, ""},
		{"ungranted namespace", "graph_query", `{"namespace":"sec","query":"MATCH (n:X) RETURN n"}`, schemas.CodeAccessDenied, ""},
		{"ungranted database", "vector_search", `{"namespace":"work","query":"x"}`, schemas.CodeAccessDenied, ""},
		{"crafted cypher", "graph_query", `{"namespace":"work","query":"MATCH (n) RETURN n"}`, schemas.CodeAccessDenied, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(tt.tool, tt.args)
			if tt.wantCode != "" {
				require.Error(t, err)
				var we *schemas.Error
				require.ErrorAs(t, err, &we)
				assert.Equal(t, tt.wantCode, we.Code)
				assert.Contains(t, we.Message, "access denied")
				return
			}
			require.NoError(t, err)
			assert.Contains(t, res.Stdout, tt.wantOut)
			assert.NotEmpty(t, res.Return)
		})
	}
	if testing.Verbose() {
		res, _ := call("graph_neighbours", `{"namespace":"work","id":"t1"}`)
		_, _ = os.Stdout.WriteString(res.Stdout)
	}
}
