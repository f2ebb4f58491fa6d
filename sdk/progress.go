package sdk

import (
	"encoding/json"
	"errors"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// WithProgress calls fn with the progress of the long work a lifecycle
// call waits for: the build of a sandbox's image (schemas.PhaseImageBuild,
// steps done of the total) while CreateSandbox waits, the population of
// the group's databases (schemas.PhasePopulation, sources done of the
// total) while Start waits. fn gets every schemas.Progress published for
// the group during the call, also for work another client started in the
// same group. It is called on another goroutine, one call at a time, and
// must not block for long.
func WithProgress(fn func(schemas.Progress)) Option {
	return func(o *options) error {
		if fn == nil {
			return errors.New("sdk.WithProgress: nil function")
		}
		o.progress = fn
		return nil
	}
}

// followProgress hands the group's progress to the WithProgress function
// until the returned func is called. Without one, or when the
// subscription fails (the command goes on without progress), it does
// nothing.
func (c *conn) followProgress(groupID string) (stop func()) {
	fn := c.opts.progress
	if fn == nil || groupID == "" {
		return func() {}
	}
	sub, err := c.nc.Subscribe(schemas.ProgressSubject(groupID), func(m *nats.Msg) {
		var p schemas.Progress
		if json.Unmarshal(m.Data, &p) == nil {
			fn(p)
		}
	})
	if err != nil {
		return func() {}
	}
	return func() { _ = sub.Unsubscribe() }
}
