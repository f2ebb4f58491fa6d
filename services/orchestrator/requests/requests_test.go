package requests_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/jsonschema"
	"github.com/sandox/sandox/services/orchestrator/placement"
	"github.com/sandox/sandox/services/orchestrator/requests"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// hostStats stands in for a host's sandbox lifecycle, whose Stats reads
// the container from the engine: it answers for the sandboxes it runs,
// named in its host's reply, and refuses the others as the lifecycle does.
type hostStats struct {
	host string
	runs map[string]bool
}

func (h hostStats) Stats(_ context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	if !h.runs[cmd.SandboxID] {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeNotFound, "sandbox %q is not on host %s", cmd.SandboxID, h.host)
	}
	return schemas.CommandResult{
		Sandboxes: []schemas.SandboxStatus{{ID: cmd.SandboxID, Host: h.host, State: schemas.StateRunning, Tools: []string{"filesystem_tools"}}},
		Stats:     &schemas.SandboxUsage{SandboxID: cmd.SandboxID, MemoryBytes: 42 << 20},
	}, nil
}

// system is one NATS server with the state buckets, and a Server per host
// serving on it until the test ends.
type system struct {
	t     *testing.T
	ns    func() *nats.Conn
	store *state.Store
}

func newSystem(t *testing.T) *system {
	t.Helper()
	ns := natstest.Start(t)
	connect := func() *nats.Conn { return natstest.Connect(t, ns) }
	js, err := jetstream.New(connect())
	require.NoError(t, err)
	require.NoError(t, state.SetupWith(t.Context(), js, state.DefaultRetention(), 1))
	store, err := state.OpenStore(t.Context(), js)
	require.NoError(t, err)
	return &system{t: t, ns: connect, store: store}
}

// serve runs worker's Server for host, whose sandboxes are runs.
func (s *system) serve(worker, host string, runs ...string) {
	s.t.Helper()
	hosts := placement.NewHosts(placement.HostsConfig{Worker: worker, Host: host, Heartbeat: time.Second, LostAfter: time.Minute}, s.store, nil, nil, nil, slog.New(slog.DiscardHandler))
	stats := hostStats{host: host, runs: map[string]bool{}}
	for _, id := range runs {
		stats.runs[id] = true
	}
	srv := requests.New(requests.Config{Worker: worker, Host: host}, s.ns(), s.store, hosts, stats, slog.New(slog.DiscardHandler))
	stop, err := srv.Serve(s.t.Context())
	require.NoError(s.t, err)
	s.t.Cleanup(stop)
}

// up records host as up and just heard from.
func (s *system) up(host string) {
	s.t.Helper()
	_, err := s.store.UpdateHost(s.t.Context(), host, nil, func(h *schemas.HostStatus) error {
		h.Name, h.State, h.LastSeen = host, schemas.HostUp, time.Now().UTC()
		return nil
	})
	require.NoError(s.t, err)
}

func ask(t *testing.T, nc *nats.Conn, subject string) schemas.StatusReply {
	t.Helper()
	m, err := nc.Request(subject, nil, 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, jsonschema.Validate("status_reply", m.Data), "the reply matches its schema")
	var r schemas.StatusReply
	require.NoError(t, json.Unmarshal(m.Data, &r))
	return r
}

func TestRequests(t *testing.T) {
	sys := newSystem(t)
	ctx := t.Context()
	sys.serve("w1", "h1", "sb-1")
	sys.serve("w2", "h2", "sb-2")
	sys.up("h1")
	sys.up("h2")
	tools := []string{"filesystem_tools"}
	g := schemas.GroupStatus{ID: "g", State: schemas.GroupRunning, Sandboxes: []string{"sb-1", "sb-2", "sb-old", "sb-gone"}}
	require.NoError(t, sys.store.CreateGroup(ctx, &g))
	for _, st := range []schemas.SandboxStatus{
		{ID: "sb-1", GroupID: "g", Host: "h1", State: schemas.StateRunning, Tools: tools},
		{ID: "sb-2", GroupID: "g", Host: "h2", State: schemas.StateRunning, Tools: tools},
		{ID: "sb-old", GroupID: "g", State: schemas.StateCreated, Tools: tools}, // recorded before placement
		{ID: "sb-far", GroupID: "g", Host: "h3", State: schemas.StateRunning, Tools: tools},
	} {
		_, err := sys.store.CreateSandbox(ctx, st)
		require.NoError(t, err)
	}
	nc := sys.ns()

	tests := []struct {
		name     string
		subject  string
		wantCode schemas.ErrorCode
		check    func(t *testing.T, r schemas.StatusReply)
	}{
		{name: "sandbox", subject: schemas.SandboxStatusSubject("sb-2"), check: func(t *testing.T, r schemas.StatusReply) {
			require.NotNil(t, r.Sandbox)
			assert.Equal(t, "h2", r.Sandbox.Host)
		}},
		{name: "sandbox that does not exist", subject: schemas.SandboxStatusSubject("nope"), wantCode: schemas.CodeNotFound},
		{name: "group: its recorded sandboxes, counted per host", subject: schemas.GroupStatusSubject("g"), check: func(t *testing.T, r schemas.StatusReply) {
			require.NotNil(t, r.Group)
			require.Len(t, r.Sandboxes, 3, "sb-gone is not recorded")
			assert.Equal(t, 3, r.Group.Hosts["h1"]+r.Group.Hosts["h2"])
			assert.Equal(t, 2, r.Group.Hosts[hostOf(r.Worker)], "sb-old, recorded before placement, counts on the answering worker's host")
		}},
		{name: "group that does not exist", subject: schemas.GroupStatusSubject("nope"), wantCode: schemas.CodeNotFound},
		{name: "stats read on the sandbox's host", subject: schemas.SandboxStatsSubject("sb-2"), check: func(t *testing.T, r schemas.StatusReply) {
			require.NotNil(t, r.Stats)
			assert.EqualValues(t, 42<<20, r.Stats.MemoryBytes)
			require.NotNil(t, r.Sandbox)
			assert.Equal(t, "h2", r.Sandbox.Host, "answered by h2's worker, relayed when h1's took the request")
		}},
		{name: "stats of a sandbox whose host was never heard from", subject: schemas.SandboxStatsSubject("sb-far"), wantCode: schemas.CodeNotFound},
		{name: "an id that is not one", subject: schemas.SandboxStatusSubject(strings.Repeat("x", 64)), wantCode: schemas.CodeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Enough asks that both workers take some (one queue group).
			for range 8 {
				r := ask(t, nc, tt.subject)
				assert.Contains(t, []string{"w1", "w2"}, r.Worker)
				if tt.wantCode != "" {
					require.NotNil(t, r.Error)
					assert.Equal(t, tt.wantCode, r.Error.Code, r.Error.Message)
					continue
				}
				require.Nil(t, r.Error)
				tt.check(t, r)
			}
		})
	}
}

// hostOf is the host of worker wN in TestRequests: hN.
func hostOf(worker string) string { return "h" + strings.TrimPrefix(worker, "w") }

// TestStatsFromASilentHost checks that a stats request for a sandbox whose
// host is live but does not answer ends in CodeUnavailable, not a hang.
func TestStatsFromASilentHost(t *testing.T) {
	sys := newSystem(t)
	sys.serve("w1", "h1")
	sys.up("h2") // recorded up, but no worker of h2 serves
	_, err := sys.store.CreateSandbox(t.Context(), schemas.SandboxStatus{ID: "sb-2", GroupID: "g", Host: "h2", State: schemas.StateRunning, Tools: []string{"filesystem_tools"}})
	require.NoError(t, err)
	r := ask(t, sys.ns(), schemas.SandboxStatsSubject("sb-2"))
	require.NotNil(t, r.Error)
	assert.Equal(t, schemas.CodeUnavailable, r.Error.Code)
	assert.Contains(t, r.Error.Message, "host h2 did not answer")
}

// TestStopDrains checks that after stop no request is answered.
func TestStopDrains(t *testing.T) {
	sys := newSystem(t)
	hosts := placement.NewHosts(placement.HostsConfig{Worker: "w1", Host: "h1", LostAfter: time.Minute}, sys.store, nil, nil, nil, slog.New(slog.DiscardHandler))
	srv := requests.New(requests.Config{Worker: "w1", Host: "h1"}, sys.ns(), sys.store, hosts, hostStats{host: "h1"}, slog.New(slog.DiscardHandler))
	stop, err := srv.Serve(t.Context())
	require.NoError(t, err)
	nc := sys.ns()
	assert.Equal(t, schemas.CodeNotFound, ask(t, nc, schemas.SandboxStatusSubject("nope")).Error.Code)
	stop()
	_, err = nc.Request(schemas.SandboxStatusSubject("nope"), nil, time.Second)
	assert.ErrorIs(t, err, nats.ErrNoResponders)
}
