package runtime

import "context"

// Freezer freezes and thaws every process of a running container (the
// engine's pause, the cgroup freezer). A frozen container keeps its
// memory, files and network; its processes get no CPU until thawed. An
// engine without it cannot pause sandboxes: pause_sandbox is refused as
// unsupported.
type Freezer interface {
	// Pause freezes the container's processes; an already frozen one is no
	// error. A container that is not running is an error; a missing one
	// wraps ErrNotFound.
	Pause(ctx context.Context, id string) error
	// Unpause thaws the container's processes; one that is not frozen is
	// no error. A missing container wraps ErrNotFound.
	Unpause(ctx context.Context, id string) error
}
