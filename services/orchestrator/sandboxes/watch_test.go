package sandboxes

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/groupdb"
	"github.com/sandox/sandox/services/orchestrator/pool"
)

// watch runs a Watcher of f's service, with real pools and group
// databases, until the test ends.
func (f *fixture) watch() {
	f.t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pools := pool.New(pool.Config{Worker: f.cfg.Worker, Host: f.cfg.Host}, pool.Parts{
		Maker: f.s.PoolMaker(), Claimer: f.s.PoolClaimer(), Measure: f.s.Host, Egress: f.s.isolation,
	}, f.store, f.nc, log)
	dbs := groupdb.New(groupdb.Config{Host: f.cfg.Host}, f.rt, nil, f.store, f.nc, log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		NewWatcher(f.s, pools, dbs).Run(ctx)
	}()
	f.t.Cleanup(func() {
		cancel()
		<-done
	})
	// The watcher follows the engine's events from when it subscribed.
	f.eventually("the watcher subscribed", func() bool { return f.rt.Subscribers() == 1 })
}

// TestWatcherPolicies kills sandboxes' processes for memory, or has their
// executors exit, and checks what the watcher makes of each.
func TestWatcherPolicies(t *testing.T) {
	tests := []struct {
		name     string
		policy   schemas.OOMPolicy
		act      func(f *fixture, container string)
		state    schemas.SandboxState
		restarts int
		event    schemas.EventKind
	}{
		{name: "oom, continue", policy: schemas.OnOOMContinue, act: func(f *fixture, c string) { f.rt.OOM(c, false) }, state: schemas.StateRunning, event: schemas.EventOOMKilled},
		{name: "oom, restart", policy: schemas.OnOOMRestart, act: func(f *fixture, c string) { f.rt.OOM(c, false) }, state: schemas.StateRunning, restarts: 1, event: schemas.EventRestarted},
		{name: "oom, fail", policy: schemas.OnOOMFail, act: func(f *fixture, c string) { f.rt.OOM(c, false) }, state: schemas.StateFailed, event: schemas.EventExited},
		{name: "oom of the executor, continue", policy: schemas.OnOOMContinue, act: func(f *fixture, c string) { f.rt.OOM(c, true) }, state: schemas.StateRunning, restarts: 1, event: schemas.EventRestarted},
		{name: "exits by itself", policy: schemas.OnOOMContinue, act: func(f *fixture, c string) { f.rt.Exit(c, 2, "panic: something broke") }, state: schemas.StateFailed, event: schemas.EventExited},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.watch()
			g := f.group("g1", schemas.GroupSpec{Compute: schemas.ComputeResources{Memory: "256MiB", OnOOM: tc.policy}})
			st := f.running(g, "sb1")
			tc.act(f, st.Container)
			f.eventually("sandbox "+string(tc.state), func() bool {
				cur, _, err := f.store.Sandbox(t.Context(), "sb1")
				return err == nil && cur.State == tc.state && cur.Restarts == tc.restarts
			})
			f.eventually("event "+string(tc.event), func() bool {
				for _, k := range f.kinds("sb1") {
					if k == tc.event {
						return true
					}
				}
				return false
			})
			c, err := f.containerOf("sb1")
			require.NoError(t, err)
			assert.Equal(t, tc.state == schemas.StateRunning, c.Running, "container running")
		})
	}
}
