package runtime

import (
	"context"
)

// ResourceUpdater changes the limits of a running container (docker
// update). A runtime without it serves claims only of the pool's own
// resources.
type ResourceUpdater interface {
	// Update sets the container's CPU, memory and process limits; zero
	// leaves a limit as it is.
	Update(ctx context.Context, id string, limits ResourceLimits) error
}

// ResourceLimits are the limits a running container can be given.
type ResourceLimits struct {
	NanoCPUs    int64
	MemoryBytes int64
	PIDs        int64
}
