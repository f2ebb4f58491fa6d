package main

import (
	"context"
	"time"
)

// background is a step of the demo that runs while the demo goes on, such
// as a sandbox whose image takes a while to build. Its goroutine is owned
// by the demo, which waits for it before it returns.
type background[T any] struct {
	done chan struct{}
	v    T
	err  error
	// took is the time from the demo's start to the step's end.
	took time.Duration
}

// inBackground runs f in a goroutine of its own; wait collects its result.
func inBackground[T any](ctx context.Context, began time.Time, f func(context.Context) (T, error)) *background[T] {
	b := &background[T]{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.v, b.err = f(ctx)
		b.took = time.Since(began)
	}()
	return b
}

// wait blocks until the step ended, or ctx is done, and returns its result.
func (b *background[T]) wait(ctx context.Context) (T, error) {
	select {
	case <-b.done:
		return b.v, b.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
