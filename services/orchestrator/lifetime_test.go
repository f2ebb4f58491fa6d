package orchestrator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/lifetime"
)

func fastSweep(c *Config) { c.LifetimeInterval = 50 * time.Millisecond }

// TestLifetimes checks that a sandbox's TTL and idle timeout, and a
// group's TTL, end it with an expired event saying why, then ended, and
// leave nothing behind.
func TestLifetimes(t *testing.T) {
	tests := []struct {
		name    string
		group   schemas.GroupSpec
		sandbox schemas.SandboxSpec
		start   bool
		// busy sends a batch every 100 ms for this long first.
		busy time.Duration
		why  string
		// notBefore is the least time from the start of the test, or from
		// the last batch, to the expired event.
		notBefore time.Duration
	}{
		{name: "ttl of a created sandbox", sandbox: schemas.SandboxSpec{TTLSeconds: 0.3}, why: lifetime.ExpiredTTL, notBefore: 300 * time.Millisecond},
		{name: "ttl of a running sandbox", sandbox: schemas.SandboxSpec{TTLSeconds: 0.5}, start: true, why: lifetime.ExpiredTTL, notBefore: 500 * time.Millisecond},
		{name: "idle timeout", sandbox: schemas.SandboxSpec{IdleTimeoutSeconds: 0.3}, start: true, why: lifetime.ExpiredIdle, notBefore: 300 * time.Millisecond},
		{name: "batches keep it alive", sandbox: schemas.SandboxSpec{IdleTimeoutSeconds: 0.4}, start: true, busy: time.Second, why: lifetime.ExpiredIdle, notBefore: 400 * time.Millisecond},
		{name: "group ttl", group: schemas.GroupSpec{TTLSeconds: 0.5}, start: true, why: lifetime.ExpiredGroupTTL, notBefore: 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, fastSweep)
			began := time.Now()
			events := h.events("sb")
			h.createGroup("g", tt.group)
			require.Nil(t, h.createSandbox("g", "sb", tt.sandbox).Error)
			if tt.start {
				h.ok(h.command(schemas.StartSandbox, "g", "sb"))
			}
			for end := time.Now().Add(tt.busy); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				began = time.Now()
				_, err := h.nc.Request(schemas.ActionsSubject("sb"), []byte(auditBatch), 5*time.Second)
				require.NoError(t, err)
				_, err = h.sandbox("sb")
				require.NoError(t, err, "ended while busy")
			}
			ev := h.nextEvent(events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventExpired })
			assert.Equal(t, tt.why, ev.Reason)
			assert.GreaterOrEqual(t, time.Since(began), tt.notBefore, "expired too early")
			h.nextEvent(events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventEnded })
			h.eventually("the sandbox's resources released", func() bool {
				_, err := h.sandbox("sb")
				return err != nil
			})
			h.requireNothingLeft("sb")
			if tt.why == lifetime.ExpiredGroupTTL {
				h.eventually("the group forgotten", func() bool {
					_, _, err := h.w.store.Group(t.Context(), "g")
					return err != nil
				})
			}
		})
	}
}

// TestLifetimeClaimedOnce runs two workers that both sweep: the sandbox
// is expired and ended once.
func TestLifetimeClaimedOnce(t *testing.T) {
	// Both workers set the streams up before either consumes: nats-server
	// v2.15.2 races (under -race) between a stream update and a consumer
	// create on that stream.
	h := newIdleHarness(t, fastSweep)
	second := h.newWorker()
	h.start()
	t.Cleanup(runWorker(t, second))
	events := h.events("sb")
	h.createGroup("g", schemas.GroupSpec{})
	require.Nil(t, h.createSandbox("g", "sb", schemas.SandboxSpec{TTLSeconds: 0.2}).Error)
	h.nextEvent(events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventEnded })
	h.requireNothingLeft("sb")
	// Any second expired or ended event would come within a few sweeps.
	time.Sleep(300 * time.Millisecond)
	for {
		m, err := events.NextMsg(10 * time.Millisecond)
		if err != nil {
			break
		}
		assert.NotContains(t, string(m.Data), `"kind":"expired"`, "expired twice")
		assert.NotContains(t, string(m.Data), `"kind":"ended"`, "ended twice")
	}
}
