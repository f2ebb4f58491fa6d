package lifetime

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// events collects what a sweeper announces.
type events struct {
	mu  sync.Mutex
	got []schemas.Event
}

func (e *events) publish(ev schemas.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, ev)
}

func (e *events) reasons() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]string{}
	for _, ev := range e.got {
		out[ev.SandboxID] = ev.Reason
	}
	return out
}

// testSweeper is a sweeper on an embedded NATS server with sandox's
// streams and buckets.
func testSweeper(t *testing.T) (*Sweeper, *state.Store, jetstream.JetStream, *events) {
	t.Helper()
	nc := natstest.Connect(t, natstest.Start(t))
	js := natstest.JetStream(t, nc)
	require.NoError(t, state.Setup(t.Context(), js))
	st, err := state.OpenStore(t.Context(), js)
	require.NoError(t, err)
	ev := &events{}
	return New(st, js, ev.publish, 20*time.Millisecond, slog.New(slog.DiscardHandler)), st, js, ev
}

// queued returns the command last put on the work queue for kind, or
// fails.
func queued(t *testing.T, js jetstream.JetStream, kind schemas.CommandKind) schemas.Command {
	t.Helper()
	stream, err := js.Stream(t.Context(), schemas.CommandStream)
	require.NoError(t, err)
	m, err := stream.GetLastMsgForSubject(t.Context(), schemas.CommandSubject(kind))
	require.NoError(t, err, "no %s queued", kind)
	var cmd schemas.Command
	require.NoError(t, json.Unmarshal(m.Data, &cmd))
	return cmd
}

func TestSet(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var st schemas.SandboxStatus
	Set(&st, schemas.SandboxSpec{TTLSeconds: 1.5, IdleTimeoutSeconds: 30}, now)
	assert.Equal(t, now, st.CreatedAt)
	assert.Equal(t, now.Add(1500*time.Millisecond), st.ExpiresAt)
	assert.Equal(t, 30.0, st.IdleTimeoutSeconds)
	st = schemas.SandboxStatus{}
	Set(&st, schemas.SandboxSpec{}, now)
	assert.True(t, st.ExpiresAt.IsZero(), "no TTL, no expiry")
}

func TestSweepSandboxes(t *testing.T) {
	s, st, js, ev := testSweeper(t)
	ctx := t.Context()
	past, long := time.Now().Add(-time.Minute).UTC(), time.Now().Add(-time.Hour).UTC()
	for _, sb := range []schemas.SandboxStatus{
		{ID: "ttl", GroupID: "g", State: schemas.StateCreated, ExpiresAt: past},
		{ID: "failed-ttl", GroupID: "g", State: schemas.StateFailed, ExpiresAt: past},
		{ID: "idle", GroupID: "g", State: schemas.StateRunning, StartedAt: long, IdleTimeoutSeconds: 1},
		{ID: "busy", GroupID: "g", State: schemas.StateRunning, StartedAt: long, IdleTimeoutSeconds: 60},
		{ID: "young", GroupID: "g", State: schemas.StateRunning, StartedAt: time.Now().UTC(), IdleTimeoutSeconds: 60},
		{ID: "not-started", GroupID: "g", State: schemas.StateCreated, IdleTimeoutSeconds: 1},
		{ID: "ending", GroupID: "g", State: schemas.StateEnding, ExpiresAt: past},
		{ID: "claimed", GroupID: "g", State: schemas.StateRunning, ExpiresAt: past, Expired: ExpiredTTL},
		{ID: "forever", GroupID: "g", State: schemas.StateRunning, StartedAt: long},
	} {
		_, err := st.CreateSandbox(ctx, sb)
		require.NoError(t, err)
	}
	// "busy" ran a batch just now: the audit log keeps it alive.
	_, err := js.Publish(ctx, schemas.BatchRecordSubject("busy"), []byte(`{}`))
	require.NoError(t, err)

	require.NoError(t, s.Sweep(ctx))
	assert.Equal(t, map[string]string{"ttl": ExpiredTTL, "failed-ttl": ExpiredTTL, "idle": ExpiredIdle}, ev.reasons())
	for id, why := range map[string]string{"ttl": ExpiredTTL, "idle": ExpiredIdle} {
		rec, _, err := st.Sandbox(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, why, rec.Expired, "claimed for ending")
	}
	cmd := queued(t, js, schemas.EndSandbox)
	assert.Equal(t, schemas.EndSandbox, cmd.Kind)
	assert.Contains(t, []string{"ttl", "failed-ttl", "idle"}, cmd.SandboxID)
	assert.Contains(t, cmd.ID, "expire-"+cmd.SandboxID+"-")

	// A second sweep (or another worker's) finds them claimed.
	require.NoError(t, s.Sweep(ctx))
	assert.Len(t, ev.reasons(), 3)
}

func TestSweepGroups(t *testing.T) {
	s, st, js, ev := testSweeper(t)
	ctx := t.Context()
	g := schemas.GroupStatus{ID: "g-old", State: schemas.GroupRunning, ExpiresAt: time.Now().Add(-time.Second).UTC(), CreatedAt: time.Now().UTC()}
	require.NoError(t, st.CreateGroup(ctx, &g))
	young := schemas.GroupStatus{ID: "g-young", State: schemas.GroupRunning, ExpiresAt: time.Now().Add(time.Hour).UTC()}
	require.NoError(t, st.CreateGroup(ctx, &young))
	for _, id := range []string{"a", "b"} {
		_, err := st.CreateSandbox(ctx, schemas.SandboxStatus{ID: id, GroupID: "g-old", State: schemas.StateRunning})
		require.NoError(t, err)
		require.NoError(t, st.JoinGroup(ctx, "g-old", id))
	}
	require.NoError(t, st.JoinGroup(ctx, "g-old", "gone")) // a member whose record is gone

	require.NoError(t, s.Sweep(ctx))
	assert.Equal(t, map[string]string{"a": ExpiredGroupTTL, "b": ExpiredGroupTTL}, ev.reasons())
	cmd := queued(t, js, schemas.EndGroup)
	assert.Equal(t, "g-old", cmd.GroupID)
	rec, _, err := st.Group(ctx, "g-old")
	require.NoError(t, err)
	assert.Equal(t, ExpiredGroupTTL, rec.Expired)
	rec, _, err = st.Group(ctx, "g-young")
	require.NoError(t, err)
	assert.Empty(t, rec.Expired)

	require.NoError(t, s.Sweep(ctx), "a group claimed already is left alone")
	assert.Len(t, ev.reasons(), 2)
}

func TestRunSweeps(t *testing.T) {
	s, st, _, ev := testSweeper(t)
	_, err := st.CreateSandbox(t.Context(), schemas.SandboxStatus{ID: "ttl", State: schemas.StateCreated, ExpiresAt: time.Now().UTC()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	require.Eventually(t, func() bool { return ev.reasons()["ttl"] == ExpiredTTL }, 5*time.Second, 10*time.Millisecond)
	cancel()
	<-done
}

func TestSweepErrors(t *testing.T) {
	s, _, js, _ := testSweeper(t)
	require.NoError(t, js.DeleteStream(t.Context(), schemas.CommandStream))
	_, ok := s.lastBatch(t.Context(), "x")
	assert.False(t, ok, "no batch recorded")
	assert.Error(t, s.enqueue(t.Context(), schemas.Command{ID: "c", Kind: schemas.EndSandbox}), "no command stream")
	assert.NoError(t, ignoreNotFound(schemas.Errorf(schemas.CodeNotFound, "gone")))
	assert.ErrorIs(t, ignoreNotFound(schemas.Errorf(schemas.CodeInternal, "x")), schemas.CodeInternal)

	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	assert.Error(t, s.Sweep(cancelled))
}

// TestPausedLifetimes: a paused sandbox's TTL still ends it, its idle
// timeout does not run while it is paused, and counts from its resume.
func TestPausedLifetimes(t *testing.T) {
	s, _, _, _ := testSweeper(t)
	now := time.Now().UTC()
	long := now.Add(-time.Hour)
	tests := []struct {
		name string
		st   schemas.SandboxStatus
		want string
	}{
		{name: "paused past its TTL", st: schemas.SandboxStatus{State: schemas.StatePaused, ExpiresAt: now.Add(-time.Second)}, want: ExpiredTTL},
		{name: "paused long past its idle timeout", st: schemas.SandboxStatus{State: schemas.StatePaused, StartedAt: long, IdleTimeoutSeconds: 60}, want: ""},
		{name: "resumed just now", st: schemas.SandboxStatus{State: schemas.StateRunning, StartedAt: long, ResumedAt: now, IdleTimeoutSeconds: 60}, want: ""},
		{name: "resumed and idle since", st: schemas.SandboxStatus{State: schemas.StateRunning, StartedAt: long, ResumedAt: now.Add(-2 * time.Minute), IdleTimeoutSeconds: 60}, want: ExpiredIdle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.st.ID = "sb-life"
			assert.Equal(t, tt.want, s.overdue(t.Context(), tt.st, now))
		})
	}
}
