package docker

import (
	"context"

	"github.com/docker/docker/api/types/container"

	"github.com/sandox/sandox/services/orchestrator/runtime"
)

var _ runtime.ResourceUpdater = (*Runtime)(nil)

// Update sets a running container's CPU, memory and process limits (docker
// update); zero leaves a limit as it is. Swap follows memory, as at
// create: no swap beyond the limit.
func (c *Client) Update(ctx context.Context, id string, nanoCPUs, memory, pids int64) error {
	r := container.Resources{NanoCPUs: nanoCPUs, Memory: memory}
	if memory > 0 {
		r.MemorySwap = memory
	}
	if pids > 0 {
		r.PidsLimit = &pids
	}
	if _, err := c.api.ContainerUpdate(ctx, id, container.UpdateConfig{Resources: r}); err != nil {
		return notFound(err, "update container "+id)
	}
	return nil
}

// Update sets a running container's limits (runtime.ResourceUpdater).
func (r *Runtime) Update(ctx context.Context, id string, l runtime.ResourceLimits) error {
	return r.c.Update(ctx, id, l.NanoCPUs, l.MemoryBytes, l.PIDs)
}
