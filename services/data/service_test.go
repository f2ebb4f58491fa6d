package data

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/data/populate/dummy"
	"github.com/sandox/sandox/services/natsd"
)

// bus is an embedded NATS under a fresh authority, with the buckets the
// orchestrator keeps, and a running data service.
type bus struct {
	url   string
	auth  *auth.Authority
	kv    jetstream.KeyValue // sandboxes
	group jetstream.KeyValue
	dir   string // PopulateDir

	mu     sync.Mutex
	denied map[*nats.Conn]chan error // see denials
}

func startBus(t *testing.T) *bus {
	t.Helper()
	a, err := auth.NewAuthority()
	require.NoError(t, err)
	s := natstest.Start(t, func(c *natsd.Config) { c.Auth = a })
	b := &bus{url: s.ClientURL(), auth: a}

	ctx := context.Background()
	control := b.connect(t, auth.RoleControl, "")
	js, err := jetstream.New(control)
	require.NoError(t, err)
	b.kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: schemas.SandboxBucket})
	require.NoError(t, err)
	b.group, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: schemas.GroupBucket})
	require.NoError(t, err)

	dataNC := b.connect(t, auth.RoleData, "")
	djs, err := jetstream.New(dataNC)
	require.NoError(t, err)
	b.dir = t.TempDir()
	svc, err := New(ctx, djs, Config{Neo4jPassword: neo.Password, PopulateDir: b.dir, Endpoints: map[string]string{schemas.DatabaseNeo4j: neo.Address}}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- svc.Serve(sctx, dataNC) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool {
		_, err := control.Request(schemas.DatabaseListSubject("nobody"), nil, time.Second)
		return err == nil
	}, 5*time.Second, 50*time.Millisecond)
	return b
}

func (b *bus) connect(t *testing.T, role auth.Role, sandbox string, grants ...schemas.DatabaseGrant) *nats.Conn {
	t.Helper()
	creds, err := b.auth.Mint("test", role, sandbox, grants...)
	require.NoError(t, err)
	opts := []nats.Option{creds.Option(), nats.NoReconnect(), nats.ErrorHandler(func(nc *nats.Conn, _ *nats.Subscription, err error) {
		// The server's refusal of a publish comes back on its own, not as
		// the request's answer: it goes to the connection's denials.
		if errors.Is(err, nats.ErrPermissionViolation) {
			select {
			case b.denials(nc) <- err:
			default:
			}
		}
	})}
	if sandbox != "" {
		opts = append(opts, nats.CustomInboxPrefix(schemas.SandboxInboxPrefix(sandbox)))
	}
	nc, err := nats.Connect(b.url, opts...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// denials is the channel of the server's permission violations for nc's
// publishes.
func (b *bus) denials(nc *nats.Conn) chan error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.denied == nil {
		b.denied = map[*nats.Conn]chan error{}
	}
	ch, ok := b.denied[nc]
	if !ok {
		ch = make(chan error, 16)
		b.denied[nc] = ch
	}
	return ch
}

// requireDenied publishes a request on subject and waits for the server to
// refuse it: the bus, not the data service, must stop it.
func (b *bus) requireDenied(t *testing.T, nc *nats.Conn, subject string) {
	t.Helper()
	ch := b.denials(nc)
	require.NoError(t, nc.PublishRequest(subject, nc.NewRespInbox(), []byte(`{}`)))
	select {
	case err := <-ch:
		assert.ErrorContains(t, err, subject)
	case <-time.After(5 * time.Second):
		t.Fatalf("the bus did not refuse a publish to %s", subject)
	}
}

func (b *bus) record(t *testing.T, st schemas.SandboxStatus) {
	t.Helper()
	data, err := json.Marshal(st)
	require.NoError(t, err)
	_, err = b.kv.Put(context.Background(), st.ID, data)
	require.NoError(t, err)
}

func ask(t *testing.T, nc *nats.Conn, subject, op string, args any) (schemas.DatabaseReply, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	data, err := json.Marshal(schemas.DatabaseRequest{Op: op, Args: raw})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	m, err := nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		return schemas.DatabaseReply{}, err
	}
	var r schemas.DatabaseReply
	require.NoError(t, json.Unmarshal(m.Data, &r))
	return r, nil
}

func TestServiceGrants(t *testing.T) {
	b := startBus(t)
	grants := schemas.DatabaseAccess{
		{Database: schemas.DatabaseNeo4j, Namespace: "pub", Read: true},
		{Database: schemas.DatabaseNeo4j, Namespace: "work", Read: true, Write: true},
	}
	b.record(t, schemas.SandboxStatus{ID: "sb-1", GroupID: "g1", State: schemas.StateRunning, Databases: grants})
	// sb-2's identity was minted with a write grant its record no longer
	// has: the service, not only the bus, decides.
	b.record(t, schemas.SandboxStatus{ID: "sb-2", GroupID: "g1", State: schemas.StateRunning, Databases: grants[:1]})
	sb := b.connect(t, auth.RoleSandbox, "sb-1", grants...)
	stale := b.connect(t, auth.RoleSandbox, "sb-2", schemas.DatabaseGrant{Database: schemas.DatabaseNeo4j, Namespace: "pub", Read: true, Write: true})
	openGraph(t) // the pub and sec namespaces

	node := schemas.GraphNodeArgs{ID: "w1", Labels: []string{"Task"}, Properties: map[string]any{"title": "write me"}}
	read := schemas.GraphQueryArgs{Query: "MATCH (p:Person) RETURN p.name AS name ORDER BY name"}
	tests := []struct {
		name     string
		nc       *nats.Conn
		subject  string
		op       string
		args     any
		wantCode schemas.ErrorCode // "" for success
		busDeny  bool              // the bus refuses the publish
	}{
		{"read where granted", sb, schemas.DatabaseSubject("sb-1", "neo4j", "pub", schemas.DatabaseRead), schemas.GraphReadQuery, read, "", false},
		{"write where granted", sb, schemas.DatabaseSubject("sb-1", "neo4j", "work", schemas.DatabaseWrite), schemas.GraphAddNode, node, "", false},
		{"write on a read grant", sb, schemas.DatabaseSubject("sb-1", "neo4j", "pub", schemas.DatabaseWrite), schemas.GraphAddNode, node, "", true},
		{"ungranted namespace", sb, schemas.DatabaseSubject("sb-1", "neo4j", "sec", schemas.DatabaseRead), schemas.GraphReadQuery, read, "", true},
		{"another sandbox's subject", sb, schemas.DatabaseSubject("sb-2", "neo4j", "pub", schemas.DatabaseRead), schemas.GraphReadQuery, read, "", true},
		{"write op on the read subject", sb, schemas.DatabaseSubject("sb-1", "neo4j", "work", schemas.DatabaseRead), schemas.GraphAddNode, node, schemas.CodeAccessDenied, false},
		{"identity allows, record does not", stale, schemas.DatabaseSubject("sb-2", "neo4j", "pub", schemas.DatabaseWrite), schemas.GraphAddNode, node, schemas.CodeAccessDenied, false},
		{"crafted cypher", sb, schemas.DatabaseSubject("sb-1", "neo4j", "pub", schemas.DatabaseRead), schemas.GraphReadQuery, schemas.GraphQueryArgs{Query: "MATCH (n) RETURN n.name"}, schemas.CodeAccessDenied, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.busDeny {
				b.requireDenied(t, tt.nc, tt.subject)
				return
			}
			r, err := ask(t, tt.nc, tt.subject, tt.op, tt.args)
			require.NoError(t, err)
			if tt.wantCode != "" {
				require.NotNil(t, r.Error)
				assert.Equal(t, tt.wantCode, r.Error.Code)
				assert.True(t, strings.HasPrefix(r.Error.Message, "access denied"), r.Error.Message)
				return
			}
			require.Nil(t, r.Error)
			assert.NotEmpty(t, r.Result)
		})
	}

	r, err := ask(t, sb, schemas.DatabaseListSubject("sb-1"), "", nil)
	require.NoError(t, err)
	assert.Equal(t, grants, r.Grants)
}

func TestServicePopulates(t *testing.T) {
	b := startBus(t)
	ctx := context.Background()
	_, err := dummy.Write(b.dir)
	require.NoError(t, err)
	cfg := "databases: {neo4j: {kg: [{source: kg-nodes.csv, format: nodes}, {source: kg-rels.csv, format: relationships}, {source: kg.cypher}, {source: missing.csv, format: nodes}]}}"
	st, err := json.Marshal(schemas.GroupStatus{ID: "gp", State: schemas.GroupRunning, Spec: schemas.GroupSpec{ID: "gp", PopulationConfig: cfg}})
	require.NoError(t, err)
	_, err = b.group.Put(ctx, "gp", st)
	require.NoError(t, err)

	client := b.connect(t, auth.RoleClient, "")
	events, err := client.SubscribeSync(schemas.PopulationEventSubject("gp"))
	require.NoError(t, err)
	control := b.connect(t, auth.RoleControl, "")
	req, _ := json.Marshal(schemas.PopulateRequest{GroupID: "gp"})
	m, err := control.Request(schemas.PopulateSubject, req, 60*time.Second)
	require.NoError(t, err)
	var reply schemas.PopulateReply
	require.NoError(t, json.Unmarshal(m.Data, &reply))
	require.Nil(t, reply.Error)
	require.Len(t, reply.Sources, 4)
	assert.Equal(t, 8, reply.Sources[0].Loaded)
	assert.Equal(t, 7, reply.Sources[1].Loaded)
	assert.Equal(t, 4, reply.Sources[2].Loaded)
	require.Len(t, reply.Sources[3].Bad, 1)
	// A missing local source names the path looked for and where local
	// sources are read from.
	assert.Contains(t, reply.Sources[3].Bad[0].Reason, "no file "+filepath.Join(b.dir, "missing.csv"))
	assert.Contains(t, reply.Sources[3].Bad[0].Reason, "local sources are read from the population directory "+b.dir)

	ev, err := events.NextMsg(5 * time.Second)
	require.NoError(t, err)
	var e schemas.PopulationEvent
	require.NoError(t, json.Unmarshal(ev.Data, &e))
	assert.Equal(t, "gp", e.GroupID)
}
