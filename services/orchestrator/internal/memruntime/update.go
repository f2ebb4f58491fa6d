package memruntime

import (
	"context"

	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// Update sets a container's limits, as docker update does.
func (r *Runtime) Update(_ context.Context, id string, l runtime.ResourceLimits) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("update", id); err != nil {
		return err
	}
	c, err := r.find(id)
	if err != nil {
		return err
	}
	if l.NanoCPUs != 0 {
		c.spec.NanoCPUs = l.NanoCPUs
	}
	if l.MemoryBytes != 0 {
		c.spec.MemoryBytes = l.MemoryBytes
	}
	if l.PIDs != 0 {
		c.spec.PIDs = l.PIDs
	}
	return nil
}

var _ runtime.ResourceUpdater = (*Runtime)(nil)
