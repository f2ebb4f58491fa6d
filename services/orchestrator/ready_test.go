package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// TestReadiness starts sandboxes whose stand-in executor only announces
// its readiness, only answers pings (an executor older than the
// announcement), or exits at once, and checks what each start reports.
func TestReadiness(t *testing.T) {
	announce := func(nc *nats.Conn, id string) error {
		data, _ := json.Marshal(schemas.ExecutorReady{Modules: []string{"announced_tools"}})
		return nc.Publish(schemas.ReadySubject(id), data)
	}
	ping := func(nc *nats.Conn, id string) error {
		_, err := nc.Subscribe(schemas.PingSubject(id), func(m *nats.Msg) {
			data, _ := json.Marshal(schemas.ExecutorReady{Modules: []string{"pinged_tools"}})
			_ = m.Respond(data)
		})
		if err == nil {
			err = nc.Flush()
		}
		return err
	}
	tests := []struct {
		name      string
		serve     func(nc *nats.Conn, id string) error
		exit      bool
		wantState schemas.SandboxState
		wantTools []string
		maxTook   time.Duration
	}{
		{"announced", announce, false, schemas.StateRunning, []string{"announced_tools"}, 20 * time.Millisecond}, // the first ping (package sandboxes)
		{"ping only", ping, false, schemas.StateRunning, []string{"pinged_tools"}, time.Second},
		{"exits", nil, true, schemas.StateFailed, nil, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.rt.SetProcess(func(ctx context.Context, spec runtime.ContainerSpec) error {
				if tc.exit {
					return fmt.Errorf("no executor here")
				}
				nc, err := nats.Connect(h.url, credsOption(spec))
				if err != nil {
					return err
				}
				defer nc.Close()
				if err := tc.serve(nc, spec.Labels[runtime.LabelSandbox]); err != nil {
					return err
				}
				<-ctx.Done()
				return nil
			})
			h.createGroup("g1", schemas.GroupSpec{})
			require.Nil(t, h.createSandbox("g1", "sb1", schemas.SandboxSpec{}).Error)
			start := time.Now()
			res := h.send(h.command(schemas.StartSandbox, "g1", "sb1"))
			took := time.Since(start)
			require.Len(t, res.Sandboxes, 1)
			assert.Equal(t, tc.wantState, res.Sandboxes[0].State)
			if tc.wantTools != nil {
				assert.Equal(t, tc.wantTools, res.Sandboxes[0].Tools)
			} else {
				assert.NotNil(t, res.Error)
			}
			assert.Less(t, took, tc.maxTook+500*time.Millisecond, "start took %s", took)
		})
	}
}

// credsOption connects with the credentials bound into the container.
func credsOption(spec runtime.ContainerSpec) nats.Option {
	for _, b := range spec.Binds {
		if b.Target == SandboxCredsPath {
			return nats.UserCredentials(b.Source)
		}
	}
	return func(*nats.Options) error { return nil }
}
