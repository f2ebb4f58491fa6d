package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// Future is the pending answer to an action batch sent with
// SendActionsAsync. Wait blocks for it; Poll checks without blocking. It is
// safe for concurrent use, and the answer, once in, is kept.
type Future struct {
	sandbox *Sandbox
	batchID string
	sent    time.Time

	mu   sync.Mutex
	sub  *nats.Subscription
	obs  []schemas.Observation
	err  error
	done chan struct{}
}

// BatchID identifies the batch; its observations are recorded under
// sandox.obs.<sandbox>.<batch id>.
func (f *Future) BatchID() string { return f.batchID }

// Wait blocks until the observations arrive or ctx ends (with no deadline,
// the group's action timeout applies). After a deadline the batch may still
// finish in the sandbox; Wait can be called again.
func (f *Future) Wait(ctx context.Context) ([]schemas.Observation, error) {
	if obs, err, ok := f.result(); ok {
		return obs, err
	}
	ctx, cancel := withDefault(ctx, f.sandbox.group.opts.actionTimeout)
	defer cancel()
	m, err := f.sub.NextMsgWithContext(ctx)
	if err != nil {
		if obs, err, ok := f.result(); ok { // a concurrent call got it
			return obs, err
		}
		return nil, f.waitError(ctx, err)
	}
	return f.settle(m)
}

// Poll returns the observations if they have arrived: done reports whether
// they have.
func (f *Future) Poll() (obs []schemas.Observation, done bool, err error) {
	if obs, err, ok := f.result(); ok {
		return obs, true, err
	}
	m, err := f.sub.NextMsg(0)
	if errors.Is(err, nats.ErrTimeout) {
		return nil, false, nil
	} else if err != nil {
		return nil, true, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	obs, err = f.settle(m)
	return obs, true, err
}

// Done is closed when the answer has been received by Wait or Poll.
func (f *Future) Done() <-chan struct{} { return f.done }

func (f *Future) result() ([]schemas.Observation, error, bool) {
	select {
	case <-f.done:
		return f.obs, f.err, true
	default:
		return nil, nil, false
	}
}

func (f *Future) settle(m *nats.Msg) ([]schemas.Observation, error) {
	var res schemas.BatchResult
	var err error
	if jerr := json.Unmarshal(m.Data, &res); jerr != nil {
		err = fmt.Errorf("%w: decode observations: %v", ErrInternal, jerr)
	} else if res.Error != nil {
		err = fmt.Errorf("sandbox %s: %w", f.sandbox.id, fromWire(res.Error))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.done:
		return f.obs, f.err
	default:
	}
	f.obs, f.err = res.Observations, err
	f.sub.Unsubscribe()
	close(f.done)
	return f.obs, f.err
}

// waitError explains why no answer came: the sandbox does not exist, is not
// running, or simply did not answer in time.
func (f *Future) waitError(ctx context.Context, err error) error {
	c, lerr := f.sandbox.group.link()
	if lerr == nil {
		st, serr := sandboxState(context.WithoutCancel(ctx), c, f.sandbox.id)
		switch {
		case errors.Is(serr, ErrNotFound):
			return fmt.Errorf("sandbox %s: %w (it was ended or never created)", f.sandbox.id, ErrNotFound)
		case serr == nil && st.State != schemas.StateRunning:
			return fmt.Errorf("sandbox %s is %s: %w: %s", f.sandbox.id, st.State, ErrSandboxGone, st.Reason)
		}
	}
	return fmt.Errorf("%w: sandbox %s: no observations after %s: %w", ErrTimeout, f.sandbox.id, time.Since(f.sent).Round(time.Millisecond), err)
}

// sandboxState reads a sandbox's recorded state from the key-value bucket.
func sandboxState(ctx context.Context, c *conn, id string) (schemas.SandboxStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var st schemas.SandboxStatus
	kv, err := c.js.KeyValue(ctx, schemas.SandboxBucket)
	if err != nil {
		return st, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	e, err := kv.Get(ctx, id)
	if err != nil {
		return st, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	if err := json.Unmarshal(e.Value(), &st); err != nil {
		return st, fmt.Errorf("%w: %v", ErrInternal, err)
	}
	return st, nil
}
