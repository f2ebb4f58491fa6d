package sdk_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/orchestrator"
)

// fastSweep makes the orchestrator look for expired lifetimes often, so
// that a test's short TTLs end on time.
func fastSweep(c *orchestrator.Config) { c.LifetimeInterval = 50 * time.Millisecond }

// nextEvent returns the next event of ch that keep accepts, failing the
// test after 15 s.
func nextEvent(t *testing.T, ch chan *nats.Msg, keep func(schemas.Event) bool) schemas.Event {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m := <-ch:
			var ev schemas.Event
			require.NoError(t, json.Unmarshal(m.Data, &ev))
			if keep(ev) {
				return ev
			}
		case <-deadline:
			t.Fatal("no such event within 15 s")
		}
	}
}

// TestLifetimeOptions checks that the lifetimes set through the SDK reach
// the orchestrator and end sandboxes by themselves: a sandbox's TTL and
// idle timeout, and a group's TTL, each with an expired event saying why,
// then ended; the sandbox is gone afterwards (ErrNotFound).
func TestLifetimeOptions(t *testing.T) {
	tests := []struct {
		name    string
		group   sdk.GroupConfig
		sandbox sdk.SandboxOptions
		start   bool
		why     string
		least   time.Duration
	}{
		{name: "ttl", sandbox: sdk.SandboxOptions{TTL: 400 * time.Millisecond}, why: "ttl", least: 400 * time.Millisecond},
		{name: "idle timeout", sandbox: sdk.SandboxOptions{IdleTimeout: 400 * time.Millisecond}, start: true, why: "idle_timeout", least: 400 * time.Millisecond},
		{name: "group ttl", group: sdk.GroupConfig{TTL: 2 * time.Second}, start: true, why: "group_ttl", least: 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startSandox(t, fastSweep)
			ctx := t.Context()
			tt.group.ID = "lt"
			began := time.Now()
			g := s.newGroup(t, tt.group)
			require.NoError(t, g.Start(ctx))
			events := s.events(t, "lt-sb")
			sb, err := g.CreateSandbox(ctx, "lt-sb", tt.sandbox)
			require.NoError(t, err)
			st := sb.Status()
			if tt.sandbox.TTL > 0 {
				assert.WithinDuration(t, st.CreatedAt.Add(tt.sandbox.TTL), st.ExpiresAt, time.Millisecond, "expires_at is created_at + ttl")
			} else {
				assert.True(t, st.ExpiresAt.IsZero(), "got expires_at %v, want none", st.ExpiresAt)
			}
			assert.InDelta(t, tt.sandbox.IdleTimeout.Seconds(), st.IdleTimeoutSeconds, 1e-9)
			if tt.start {
				require.NoError(t, sb.Start(ctx))
			}

			ev := nextEvent(t, events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventExpired })
			assert.Equal(t, tt.why, ev.Reason)
			assert.GreaterOrEqual(t, time.Since(began), tt.least, "expired too early")
			ended := nextEvent(t, events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventEnded })
			require.NotNil(t, ended.Sandbox)
			assert.Equal(t, tt.why, ended.Sandbox.Expired, "the ended sandbox's status says why")
			require.Eventually(t, func() bool {
				_, err := sb.Refresh(ctx)
				return errors.Is(err, sdk.ErrNotFound)
			}, 10*time.Second, 50*time.Millisecond, "the sandbox is gone")
		})
	}
}

// TestLifecycleOptionsValidated checks that the SDK refuses bad lifecycle
// settings itself, before it contacts sandox, with ErrBadRequest naming the
// setting: NewSandboxGroup for the group's and its initial sandboxes',
// CreateSandbox for a sandbox's.
func TestLifecycleOptionsValidated(t *testing.T) {
	allow := &schemas.Egress{Policy: schemas.EgressAllowlist}
	tests := []struct {
		name    string
		group   sdk.GroupConfig
		sandbox *sdk.SandboxOptions
		want    string
	}{
		{name: "negative group ttl", group: sdk.GroupConfig{TTL: -time.Second}, want: "group ttl -1s"},
		{name: "negative ttl of an initial sandbox", group: sdk.GroupConfig{Sandboxes: []sdk.InitialSandbox{{ID: "i", SandboxOptions: sdk.SandboxOptions{TTL: -time.Second}}}}, want: "sandbox i: ttl -1s"},
		{name: "negative ttl", sandbox: &sdk.SandboxOptions{TTL: -time.Minute}, want: "ttl -1m0s"},
		{name: "negative idle timeout", sandbox: &sdk.SandboxOptions{IdleTimeout: -time.Second}, want: "idle timeout -1s"},
		{name: "group egress allowlist without destinations", group: sdk.GroupConfig{Egress: allow}, want: "allow lists nothing"},
		{name: "sandbox egress policy unknown", sandbox: &sdk.SandboxOptions{Egress: &schemas.Egress{Policy: "some"}}, want: `egress policy "some"`},
		{name: "group database unknown", group: sdk.GroupConfig{DatabaseAccess: schemas.DatabaseAccess{{Database: "mysql", Namespace: "n"}}}, want: `database "mysql"`},
		{name: "sandbox namespace bad", sandbox: &sdk.SandboxOptions{AttachedDatabases: &schemas.DatabaseAccess{{Database: "qdrant", Namespace: "a.b"}}}, want: `namespace "a.b"`},
		{name: "placement unknown", group: sdk.GroupConfig{Placement: "scatter"}, want: `placement "scatter"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.group.ID = "v"
			g, err := sdk.NewSandboxGroup(tt.group, sdk.WithURL("nats://127.0.0.1:1"))
			if tt.sandbox == nil {
				require.ErrorIs(t, err, sdk.ErrBadRequest)
				assert.ErrorContains(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			_, err = g.CreateSandbox(t.Context(), "sb", *tt.sandbox)
			require.ErrorIs(t, err, sdk.ErrBadRequest)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// TestBatchLostToIdleTimeout checks that a batch running longer than its
// sandbox's idle timeout does not keep the sandbox alive: the batch fails
// with ErrSandboxGone saying which lifetime was over.
func TestBatchLostToIdleTimeout(t *testing.T) {
	s := startSandox(t, fastSweep)
	ctx := t.Context()
	g := s.newGroup(t, sdk.GroupConfig{ID: "lost"})
	require.NoError(t, g.Start(ctx))
	sb, err := g.CreateSandbox(ctx, "lost-sb", sdk.SandboxOptions{IdleTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, sb.Start(ctx))
	start := time.Now()
	_, err = sb.SendActions(ctx, run(t, "sleep 20"))
	require.ErrorIs(t, err, sdk.ErrSandboxGone)
	assert.ErrorContains(t, err, "expired (idle_timeout)")
	assert.Less(t, time.Since(start), 15*time.Second, "the batch failed when the sandbox expired, not at its end")
}
