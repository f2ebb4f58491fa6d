package docker

import (
	"context"
	"strings"

	"github.com/sandox/sandox/services/orchestrator/runtime"
)

var _ runtime.Freezer = (*Runtime)(nil)

// Pause freezes every process of a running container (docker pause, the
// cgroup freezer); an already paused container is no error.
func (c *Client) Pause(ctx context.Context, id string) error {
	err := c.api.ContainerPause(ctx, id)
	if err != nil && strings.Contains(err.Error(), "already paused") {
		return nil
	}
	if err != nil {
		return notFound(err, "pause container "+id)
	}
	return nil
}

// Unpause thaws a paused container's processes (docker unpause); a
// container that is not paused is no error.
func (c *Client) Unpause(ctx context.Context, id string) error {
	err := c.api.ContainerUnpause(ctx, id)
	if err != nil && strings.Contains(err.Error(), "is not paused") {
		return nil
	}
	if err != nil {
		return notFound(err, "unpause container "+id)
	}
	return nil
}

// Pause freezes a container's processes (runtime.Freezer).
func (r *Runtime) Pause(ctx context.Context, id string) error {
	if err := r.c.Pause(ctx, id); err != nil {
		return orchestratorError(err)
	}
	return nil
}

// Unpause thaws a container's processes (runtime.Freezer).
func (r *Runtime) Unpause(ctx context.Context, id string) error {
	if err := r.c.Unpause(ctx, id); err != nil {
		return orchestratorError(err)
	}
	return nil
}
