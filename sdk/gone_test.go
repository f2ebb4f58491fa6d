package sdk_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/jsonschema"
	"github.com/sandox/sandox/sdk"
)

// TestBatchToSandboxThatCannotAnswer checks that a batch sent to a sandbox
// that is not running, or does not exist, fails at once (no executor
// responds) with the reason the orchestrator's status gives.
func TestBatchToSandboxThatCannotAnswer(t *testing.T) {
	s := startSandox(t)
	g := s.newGroup(t, sdk.GroupConfig{ID: "gone"})
	require.NoError(t, g.Start(t.Context()))
	_, err := g.CreateSandbox(t.Context(), "gone-created", sdk.SandboxOptions{})
	require.NoError(t, err)

	tests := []struct {
		name    string
		sandbox string
		want    error
	}{
		{name: "created, not started", sandbox: "gone-created", want: sdk.ErrSandboxGone},
		{name: "never created", sandbox: "gone-nope", want: sdk.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := g.Attach(tt.sandbox).SendActions(t.Context(), run(t, "echo hi"))
			require.ErrorIs(t, err, tt.want)
			assert.Less(t, time.Since(start), time.Second, "no responders, then the status says why")
		})
	}
}

// TestBatchLostToEvents checks that a batch whose sandbox stops, restarts
// or is ended while it runs fails at once with ErrSandboxGone, from the
// event's kind, and that the SDK sees the new state.
func TestBatchLostToEvents(t *testing.T) {
	tests := []struct {
		name      string
		stop      func(s *sandox, sb *sdk.Sandbox) error
		wantKind  schemas.EventKind
		wantState schemas.SandboxState
	}{
		{
			name:      "exited",
			stop:      func(s *sandox, sb *sdk.Sandbox) error { s.engine.crash(sb.ID(), 2, false); return nil },
			wantKind:  schemas.EventExited,
			wantState: schemas.StateFailed,
		},
		{
			name:      "restarted after an OOM kill",
			stop:      func(s *sandox, sb *sdk.Sandbox) error { s.engine.crash(sb.ID(), 137, true); return nil },
			wantKind:  schemas.EventRestarted,
			wantState: schemas.StateRunning,
		},
		{
			name:     "ended",
			stop:     func(s *sandox, sb *sdk.Sandbox) error { return sb.End(t.Context()) },
			wantKind: schemas.EventEnded,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startSandox(t)
			id := "lost-" + string(rune('a'+i))
			_, sb := s.startedSandbox(t, "lost", id)
			events := s.events(t, id)
			f, err := sb.SendActionsAsync(t.Context(), run(t, "touch taken; sleep 20"))
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				_, err := os.Stat(filepath.Join(s.engine.workspace(id), "taken"))
				return err == nil
			}, 10*time.Second, 10*time.Millisecond, "the executor did not take the batch")
			require.NoError(t, tt.stop(s, sb))

			start := time.Now()
			_, err = f.Wait(t.Context())
			require.ErrorIs(t, err, sdk.ErrSandboxGone)
			assert.Contains(t, err.Error(), string(tt.wantKind))
			assert.Less(t, time.Since(start), 5*time.Second)
			ev := waitEvent(t, events, tt.wantKind)
			if tt.wantKind != schemas.EventEnded {
				assert.NotEmpty(t, ev.Reason, "a %s event says why", ev.Kind)
			}
			if tt.wantState == "" {
				return
			}
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				st, err := sb.Refresh(t.Context())
				require.NoError(c, err)
				assert.Equal(c, tt.wantState, st.State)
			}, 10*time.Second, 50*time.Millisecond)
		})
	}
}

// TestAfterRestart checks that a restarted sandbox answers again and that
// its first observation says it was restarted.
func TestAfterRestart(t *testing.T) {
	s := startSandox(t)
	_, sb := s.startedSandbox(t, "again", "again-a")
	events := s.events(t, "again-a")
	s.engine.crash("again-a", 137, true)
	waitEvent(t, events, schemas.EventRestarted)
	waitEvent(t, events, schemas.EventStarted)
	st, err := sb.Refresh(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, st.Restarts)
	obs, err := sb.SendActions(t.Context(), run(t, "echo back"))
	require.NoError(t, err)
	require.Len(t, obs, 1)
	assert.Equal(t, "back\n", obs[0].Stdout)
	require.NotEmpty(t, obs[0].LimitsHit, "the restart notice")
	assert.Equal(t, schemas.LimitMemory, obs[0].LimitsHit[0].Resource)
}

// TestNoOrchestratorNoExecutor checks the paths where nothing answers: a
// batch to a sandbox without an executor is refused by the server at once
// (no responders), and status, stats and commands are ErrUnavailable.
func TestNoOrchestratorNoExecutor(t *testing.T) {
	ns := startNATS(t)
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "alone"}, sdk.WithURL(ns.ClientURL()), sdk.WithCommandTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	sb := g.Attach("alone-a")

	start := time.Now()
	_, err = sb.SendActions(t.Context(), run(t, "echo hi"))
	require.ErrorIs(t, err, sdk.ErrSandboxGone)
	assert.Less(t, time.Since(start), 2*time.Second, "no responders comes at once")

	_, err = sb.Refresh(t.Context())
	assert.ErrorIs(t, err, sdk.ErrUnavailable)
	_, err = sb.Stats(t.Context())
	assert.ErrorIs(t, err, sdk.ErrUnavailable)
	_, err = sb.Tools(t.Context())
	assert.ErrorIs(t, err, sdk.ErrSandboxGone)
	err = g.Start(t.Context())
	assert.ErrorIs(t, err, sdk.ErrUnavailable, "no command stream")
}

// waitEvent returns the next event of the given kind, or fails after 10 s.
func waitEvent(t *testing.T, ch chan *nats.Msg, kind schemas.EventKind) schemas.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-ch:
			var ev schemas.Event
			require.NoError(t, json.Unmarshal(m.Data, &ev))
			require.NoError(t, jsonschema.Validate("event", m.Data))
			if ev.Kind == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event within 10s", kind)
		}
	}
}

// TestStatusCheckFindsLostExecutor checks the status checks while Wait
// waits: an executor that took the batch and went away without an event
// (a lost host) is found by the orchestrator's status, not by the action
// timeout.
func TestStatusCheckFindsLostExecutor(t *testing.T) {
	s := startSandox(t)
	_, sb := s.startedSandbox(t, "lost-host", "lost-host-a")
	f, err := sb.SendActionsAsync(t.Context(), run(t, "touch taken; sleep 20"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(s.engine.workspace("lost-host-a"), "taken"))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "the executor did not take the batch")

	// The host is lost: the executor is gone, nobody saw it go, and the
	// state says so only later (here: written straight to the bucket).
	s.engine.vanish("lost-host-a")
	js, err := jetstream.New(s.nc)
	require.NoError(t, err)
	kv, err := js.KeyValue(t.Context(), schemas.SandboxBucket)
	require.NoError(t, err)
	st := sb.Status()
	st.State, st.Reason = schemas.StateFailed, "its host was lost"
	data, err := json.Marshal(st)
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), st.ID, data)
	require.NoError(t, err)

	start := time.Now()
	_, err = f.Wait(t.Context())
	require.ErrorIs(t, err, sdk.ErrSandboxGone)
	assert.Contains(t, err.Error(), "its host was lost")
	assert.Less(t, time.Since(start), 5*time.Second, "found by the first status checks")
}

// TestDeadlineOnGoneSandbox checks that a deadline that passes before the
// first status check still says why the sandbox cannot answer.
func TestDeadlineOnGoneSandbox(t *testing.T) {
	s := startSandox(t)
	_, sb := s.startedSandbox(t, "late", "late-a")
	f, err := sb.SendActionsAsync(t.Context(), run(t, "touch taken; sleep 20"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(s.engine.workspace("late-a"), "taken"))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "the executor did not take the batch")
	s.engine.vanish("late-a")
	js, err := jetstream.New(s.nc)
	require.NoError(t, err)
	kv, err := js.KeyValue(t.Context(), schemas.SandboxBucket)
	require.NoError(t, err)
	require.NoError(t, kv.Delete(t.Context(), "late-a"))

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = f.Wait(ctx)
	require.ErrorIs(t, err, sdk.ErrNotFound, "the deadline's error says the sandbox is gone")
	_, err = f.Wait(t.Context())
	require.ErrorIs(t, err, sdk.ErrNotFound, "and the future is settled")
}
