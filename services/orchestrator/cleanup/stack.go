// Package cleanup is the undo stack of what a create makes: each step that
// makes a resource pushes the step that removes it, and a failure runs
// them all, last made first, once, under a context the caller's
// cancellation does not reach.
package cleanup

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Timeout bounds a whole run of a cleanup stack, which runs without
// the caller's cancellation and so would otherwise wait forever on an
// engine that does not answer.
const Timeout = 2 * time.Minute

// Stack is the undo stack of one sandbox's resources. Each step that
// makes a resource pushes the step that removes it; when the create fails,
// run removes them all, last made first. An undo that tolerates its
// resource being absent (a container, a volume, a disk) is pushed before
// the call that makes it, since a failed call can leave part of it behind;
// one that does not (the sandbox's record, which may be another's) is
// pushed after. The zero value is an empty stack. It is safe for concurrent
// use.
type Stack struct {
	mu    sync.Mutex
	steps []undoStep
	ran   bool
}

type undoStep struct {
	what string
	undo func(ctx context.Context) error
}

// Push adds the undo of the resource what to the top of the stack.
func (c *Stack) Push(what string, undo func(ctx context.Context) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps = append(c.steps, undoStep{what: what, undo: undo})
}

// Run runs every undo step once, last pushed first, under a context that
// is not cancelled with ctx (bounded by Timeout). A failing step
// does not stop the others; Run returns their errors joined, each naming
// its resource. Later calls do nothing and return nil. Run blocks until
// every step has returned.
func (c *Stack) Run(ctx context.Context) error {
	c.mu.Lock()
	steps := c.steps
	done := c.ran
	c.ran, c.steps = true, nil
	c.mu.Unlock()
	if done {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Timeout)
	defer cancel()
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		if err := steps[i].undo(ctx); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", steps[i].what, err))
		}
	}
	return errors.Join(errs...)
}
