package orchestrator

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// twoWorkers runs two workers on one NATS server and one engine.
func twoWorkers(t *testing.T) *harness {
	t.Helper()
	// Both workers set the streams up before either consumes (see
	// TestOOMSeenTwiceCountsOnce).
	h := newIdleHarness(t)
	second := h.newWorker()
	second.cfg.Worker = "unit-worker-2"
	h.start()
	t.Cleanup(runWorker(t, second))
	return h
}

// TestOneDieHandledOnce kills the executor of a running sandbox whose
// policy restarts it, with two workers watching the engine: one of them
// claims the die (compare-and-set on last_exit_at) and restarts it, once.
func TestOneDieHandledOnce(t *testing.T) {
	h := twoWorkers(t)
	for i := range 3 {
		id := fmt.Sprintf("die-%d", i)
		st := h.runningSandbox(id, schemas.OnOOMContinue)
		events := h.events(id)
		h.rt.OOM(st.Container, true)
		h.nextEvent(events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventStarted })
		// A second restart would follow within the ready timeout.
		time.Sleep(300 * time.Millisecond)
		for {
			m, err := events.NextMsg(10 * time.Millisecond)
			if err != nil {
				break
			}
			assert.NotContains(t, string(m.Data), `"kind":"restarted"`, "restarted twice")
		}
		got, err := h.sandbox(id)
		require.NoError(t, err)
		assert.Equal(t, 1, got.Restarts, "restarts of %s", id)
		assert.Equal(t, schemas.StateRunning, got.State)
	}
}

// TestStartRacingEnd sends start_sandbox and end_sandbox for the same
// sandbox at once, to two workers: whatever the order, an ended sandbox
// stays ended (its record is not written back by the start) and nothing
// of it is left.
func TestStartRacingEnd(t *testing.T) {
	h := twoWorkers(t)
	var ids []string
	for i := range 6 {
		id := fmt.Sprintf("race-%d", i)
		ids = append(ids, id)
		h.createGroup("g-"+id, schemas.GroupSpec{})
		require.Nil(t, h.createSandbox("g-"+id, id, schemas.SandboxSpec{}).Error)
		var wg sync.WaitGroup
		var start, end schemas.CommandResult
		wg.Go(func() { start = h.send(h.command(schemas.StartSandbox, "g-"+id, id)) })
		wg.Go(func() { end = h.send(h.command(schemas.EndSandbox, "g-"+id, id)) })
		wg.Wait()
		require.Nil(t, end.Error, "end of %s", id)
		if start.Error != nil {
			assert.Contains(t, []schemas.ErrorCode{schemas.CodeConflict, schemas.CodeNotFound}, start.Error.Code, "start of %s: %s", id, start.Error.Message)
		}
		_, err := h.sandbox(id)
		require.Error(t, err, "record of %s written back after its end", id)
	}
	h.eventually("nothing left", func() bool {
		containers, volumes := h.rt.Counts()
		return containers == 0 && volumes == 0
	})
	h.requireNothingLeft(ids...)
}
