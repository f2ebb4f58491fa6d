package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"sync"
	"time"
)

// cleanupTimeout bounds a whole run of a cleanup stack, which runs without
// the caller's cancellation and so would otherwise wait forever on an
// engine that does not answer.
const cleanupTimeout = 2 * time.Minute

// cleanup is the undo stack of one sandbox's resources. Each step that
// makes a resource pushes the step that removes it; when the create fails,
// run removes them all, last made first. An undo that tolerates its
// resource being absent (a container, a volume, a disk) is pushed before
// the call that makes it, since a failed call can leave part of it behind;
// one that does not (the sandbox's record, which may be another's) is
// pushed after. The zero value is an empty stack. It is safe for concurrent
// use.
type cleanup struct {
	mu    sync.Mutex
	steps []undoStep
	ran   bool
}

type undoStep struct {
	what string
	undo func(ctx context.Context) error
}

// push adds the undo of the resource what to the top of the stack.
func (c *cleanup) push(what string, undo func(ctx context.Context) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps = append(c.steps, undoStep{what: what, undo: undo})
}

// run runs every undo step once, last pushed first, under a context that
// is not cancelled with ctx (bounded by cleanupTimeout). A failing step
// does not stop the others; run returns their errors joined, each naming
// its resource. Later calls do nothing and return nil. run blocks until
// every step has returned.
func (c *cleanup) run(ctx context.Context) error {
	c.mu.Lock()
	steps := c.steps
	done := c.ran
	c.ran, c.steps = true, nil
	c.mu.Unlock()
	if done {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		if err := steps[i].undo(ctx); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", steps[i].what, err))
		}
	}
	return errors.Join(errs...)
}

// The resources of a sandbox, as named in cleanup errors and logs.
const (
	resRecord    = "record"
	resLedger    = "ledger allocation"
	resDisk      = "disk"
	resVolume    = "volume"
	resContainer = "container"
	resIdentity  = "identity"
	resEgress    = "egress proxy"
	resNetwork   = "empty egress networks"
)

// sandboxResources returns the full undo stack of an existing sandbox:
// running it revokes the sandbox's identity first, so that it is off the
// bus at once, then removes the container, the volume and the disk, and
// releases the ledger allocation; last it removes the bridges of open
// egress left empty. The sandbox's record is not on it.
func (w *Worker) sandboxResources(container, sandboxID string) *cleanup {
	c := &cleanup{}
	c.push(resNetwork, func(ctx context.Context) error { return w.pruneEgressNetworks(ctx, runtime.ContainerName(sandboxID)) })
	c.push(resLedger, func(ctx context.Context) error { return w.release(ctx, sandboxID) })
	c.push(resDisk, func(context.Context) error { return w.detachDisk(sandboxID) })
	c.push(resVolume, func(ctx context.Context) error { return w.rt.RemoveVolume(ctx, runtime.VolumeName(sandboxID)) })
	c.push(resEgress, func(context.Context) error { return w.egress.Close(sandboxID) })
	c.push(resContainer, func(ctx context.Context) error { return w.rt.Remove(ctx, container) })
	c.push(resIdentity, func(ctx context.Context) error { return w.revokeIdentity(ctx, sandboxID) })
	return c
}

// removeSandboxResources revokes a sandbox's identity, removes its
// container, volume and disk and releases its ledger allocation. It tries every one even when an earlier
// one fails, and returns the failures joined.
func (w *Worker) removeSandboxResources(ctx context.Context, container, sandboxID string) error {
	return w.sandboxResources(container, sandboxID).run(ctx)
}
