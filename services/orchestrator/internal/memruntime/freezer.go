package memruntime

import (
	"context"
	"fmt"

	"github.com/sandox/sandox/services/orchestrator/runtime"
)

var _ runtime.Freezer = (*Runtime)(nil)

// Pause freezes a running container, as docker pause does: its process
// keeps running in this engine, which only records it paused.
func (r *Runtime) Pause(_ context.Context, id string) error {
	return r.setPaused(id, true)
}

// Unpause thaws a paused container.
func (r *Runtime) Unpause(_ context.Context, id string) error {
	return r.setPaused(id, false)
}

func (r *Runtime) setPaused(id string, paused bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := "unpause"
	if paused {
		op = "pause"
	}
	if err := r.check(op, id); err != nil {
		return err
	}
	c, err := r.find(id)
	if err != nil {
		return err
	}
	if !c.state.Running {
		return fmt.Errorf("mem %s %s: container is not running", op, id)
	}
	c.paused = paused
	return nil
}

// Paused reports whether the container with id is paused.
func (r *Runtime) Paused(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.find(id)
	return err == nil && c.paused
}
