package dashboard

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/audit"
)

// ErrNotFound reports a group or sandbox that is not recorded (and, for a
// sandbox, has no history in the audit log either).
var ErrNotFound = errors.New("not found")

// State is what the buckets hold (audit.ReadState), with the look-ups the
// pages make.
type State struct{ audit.State }

// readState reads the buckets of hosts, groups and sandboxes.
func readState(ctx context.Context, js jetstream.JetStream) (State, error) {
	st, err := audit.ReadState(ctx, js)
	return State{st}, err
}

// Group returns the recorded group id, or ErrNotFound.
func (st State) Group(id string) (schemas.GroupStatus, error) {
	for _, g := range st.Groups {
		if g.ID == id {
			return g, nil
		}
	}
	return schemas.GroupStatus{}, fmt.Errorf("group %q: %w: no such group is recorded (it ended, or never existed)", id, ErrNotFound)
}

// Sandbox returns the recorded sandbox id, or ErrNotFound.
func (st State) Sandbox(id string) (schemas.SandboxStatus, error) {
	for _, sb := range st.Sandboxes {
		if sb.ID == id {
			return sb, nil
		}
	}
	return schemas.SandboxStatus{}, fmt.Errorf("sandbox %q: %w", id, ErrNotFound)
}

// Members returns the sandboxes of group id, without pooled ones.
func (st State) Members(id string) []schemas.SandboxStatus {
	var out []schemas.SandboxStatus
	for _, sb := range st.Sandboxes {
		if sb.GroupID == id && !sb.Pooled {
			out = append(out, sb)
		}
	}
	return out
}

// Active returns the sandboxes clients made: every record but the pooled
// sandboxes waiting to be claimed (Pools counts those).
func (st State) Active() []schemas.SandboxStatus {
	var out []schemas.SandboxStatus
	for _, sb := range st.Sandboxes {
		if !sb.Pooled {
			out = append(out, sb)
		}
	}
	return out
}
