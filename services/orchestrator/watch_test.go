package orchestrator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// runningSandbox creates and starts sandbox id in a new group g with the
// OOM policy onOOM, and returns its status.
func (h *harness) runningSandbox(id string, onOOM schemas.OOMPolicy) schemas.SandboxStatus {
	h.t.Helper()
	h.createGroup("g-"+id, schemas.GroupSpec{Compute: schemas.ComputeResources{Memory: "256MiB", OnOOM: onOOM}})
	require.Nil(h.t, h.createSandbox("g-"+id, id, schemas.SandboxSpec{}).Error)
	return h.ok(h.command(schemas.StartSandbox, "g-"+id, id)).Sandboxes[0]
}

// TestOOMPolicies kills a process of a running sandbox for memory and
// checks what each policy does.
func TestOOMPolicies(t *testing.T) {
	tests := []struct {
		name     string
		policy   schemas.OOMPolicy
		main     bool // the executor itself is killed
		state    schemas.SandboxState
		restarts int
		event    func(schemas.Event) bool
	}{
		{
			name: "continue", policy: schemas.OnOOMContinue, state: schemas.StateRunning,
			event: func(ev schemas.Event) bool { return ev.Kind == schemas.EventOOMKilled },
		},
		{
			name: "restart", policy: schemas.OnOOMRestart, state: schemas.StateRunning, restarts: 1,
			event: func(ev schemas.Event) bool { return strings.HasPrefix(ev.Message, "restarted: it ran out of memory") },
		},
		{
			name: "fail", policy: schemas.OnOOMFail, state: schemas.StateFailed,
			event: func(ev schemas.Event) bool { return ev.Kind == schemas.EventExited },
		},
		{
			name: "continue, executor killed", policy: schemas.OnOOMContinue, main: true, state: schemas.StateRunning, restarts: 1,
			event: func(ev schemas.Event) bool {
				return strings.HasPrefix(ev.Message, "restarted: its executor was killed")
			},
		},
		{
			name: "fail, executor killed", policy: schemas.OnOOMFail, main: true, state: schemas.StateFailed,
			event: func(ev schemas.Event) bool { return ev.Kind == schemas.EventExited },
		},
	}
	h := newHarness(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "oom" + string(rune('a'+i))
			st := h.runningSandbox(id, tt.policy)
			events := h.events(id)
			h.rt.OOM(st.Container, tt.main)

			ev := h.nextEvent(events, tt.event)
			assert.Equal(t, id, ev.SandboxID)
			h.eventually("sandbox "+string(tt.state), func() bool {
				st, err := h.sandbox(id)
				return err == nil && st.State == tt.state && st.Restarts == tt.restarts
			})
			st, err := h.sandbox(id)
			require.NoError(t, err)
			assert.Equal(t, int64(1), st.OOMKills, "OOM kills")
			c, err := h.rt.Inspect(t.Context(), st.Container)
			require.NoError(t, err)
			assert.Equal(t, tt.state == schemas.StateRunning, c.Running, "container running")
			if tt.state == schemas.StateFailed {
				assert.Contains(t, st.Reason, "out of memory")
			}
			h.ok(h.command(schemas.EndSandbox, "g-"+id, id))
		})
	}
	h.requireNothingLeft()
}

// TestSandboxExitsByItself checks that a running sandbox whose executor
// exits is marked failed with its exit code and logs.
func TestSandboxExitsByItself(t *testing.T) {
	h := newHarness(t)
	st := h.runningSandbox("sb1", "")
	events := h.events("sb1")
	h.rt.Exit(st.Container, 2, "panic: something broke")
	ev := h.nextEvent(events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventExited })
	assert.Contains(t, ev.Message, "exit code 2")
	assert.Contains(t, ev.Message, "something broke")
	st, err := h.sandbox("sb1")
	require.NoError(t, err)
	assert.Equal(t, schemas.StateFailed, st.State)
}

// TestOOMSeenTwiceCountsOnce checks that an OOM event that a reopened
// event stream repeats, and that a second worker on the same engine sees
// too, is recorded once.
func TestOOMSeenTwiceCountsOnce(t *testing.T) {
	// Both workers set up the streams before either consumes: the NATS
	// server races a stream update against a consumer being created.
	h := newIdleHarness(t)
	second := h.newWorker()
	h.start()
	stop := runWorker(t, second)
	defer stop()
	st := h.runningSandbox("sb1", schemas.OnOOMContinue)
	events := h.events("sb1")

	h.rt.OOM(st.Container, false)
	h.nextEvent(events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventOOMKilled })
	// The stream breaks; both watchers reopen it from the last event seen,
	// the OOM kill, which the engine sends again.
	h.rt.BreakEvents(errors.New("connection reset"))
	h.eventually("watchers back", func() bool {
		return h.rt.Subscribers() == 2
	})
	h.rt.OOM(st.Container, false)
	ev := h.nextEvent(events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventOOMKilled })
	assert.Contains(t, ev.Message, "OOM kill 2")

	st, err := h.sandbox("sb1")
	require.NoError(t, err)
	assert.Equal(t, int64(2), st.OOMKills, "each OOM kill counted once")
	assert.Equal(t, schemas.StateRunning, st.State)
}

// TestEventsOfOneSandboxDoNotWaitForAnother restarts a sandbox after an
// OOM kill whose executor never comes back, so that its restart waits out
// ReadyTimeout, and meanwhile OOM-kills a process of another sandbox: the
// other's kill is recorded while the first restart still waits, not after.
func TestEventsOfOneSandboxDoNotWaitForAnother(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ReadyTimeout = 5 * time.Second })
	slow := h.runningSandbox("slow", schemas.OnOOMRestart)
	quick := h.runningSandbox("quick", schemas.OnOOMContinue)

	// From now on, a started executor of "slow" never announces itself.
	executor := h.rt.Process()
	h.rt.SetProcess(func(ctx context.Context, spec runtime.ContainerSpec) error {
		if slices.Contains(spec.Env, schemas.EnvSandboxID+"=slow") {
			<-ctx.Done()
			return nil
		}
		return executor(ctx, spec)
	})

	slowEvents := h.events("slow")
	h.rt.OOM(slow.Container, false)
	h.nextEvent(slowEvents, func(ev schemas.Event) bool { return ev.Kind == schemas.EventRestarted })

	h.rt.OOM(quick.Container, false)
	h.eventually("the other sandbox's OOM kill recorded", func() bool {
		st, err := h.sandbox("quick")
		return err == nil && st.OOMKills == 1
	})
	st, err := h.sandbox("slow")
	require.NoError(t, err)
	assert.Equal(t, schemas.StateRunning, st.State, "the first sandbox's restart still waits for its executor (%s)", st.Reason)

	h.eventually("the restart gives up after ReadyTimeout", func() bool {
		st, err := h.sandbox("slow")
		return err == nil && st.State == schemas.StateFailed
	})
}

// TestDieOfAnotherWorkersRestart plays the die and the start of a restart
// that another worker of the engine makes, 300 ms apart: the container
// runs again within RestartGrace, so the die is not taken for a crash and
// the sandbox stays running. A die with no start after it is a crash.
func TestDieOfAnotherWorkersRestart(t *testing.T) {
	h := newHarness(t)
	st := h.runningSandbox("restarted", schemas.OnOOMContinue)
	events := h.events("restarted")
	h.rt.Exit(st.Container, 137, "")
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, h.rt.Start(t.Context(), st.Container))
	time.Sleep(h.cfg.RestartGrace + time.Second)
	got, err := h.sandbox("restarted")
	require.NoError(t, err)
	assert.Equal(t, schemas.StateRunning, got.State, "a restart's die is no crash (%s)", got.Reason)
	if m, err := events.NextMsg(10 * time.Millisecond); err == nil {
		assert.NotContains(t, string(m.Data), `"kind":"exited"`, "no exited event")
	}

	h.rt.Exit(st.Container, 1, "boom")
	h.eventually("a die with no start after it fails the sandbox", func() bool {
		got, err := h.sandbox("restarted")
		return err == nil && got.State == schemas.StateFailed
	})
}
