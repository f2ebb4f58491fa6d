package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// Future is the pending answer to an action batch sent with
// SendActionsAsync. Wait blocks for it; Poll checks without blocking. It is
// safe for concurrent use, and the answer, once in, is kept.
type Future struct {
	sandbox *Sandbox
	batchID string
	sent    time.Time

	mu     sync.Mutex
	sub    *nats.Subscription
	evSub  *nats.Subscription
	events chan *nats.Msg
	lost   string // why the batch will not be answered, from an event
	obs    []schemas.Observation
	err    error
	done   chan struct{}
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
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go f.watchLoss(wctx, stop)
	// Between waits, check that the sandbox still runs: a batch whose
	// executor took it and then went away is never answered. (A batch that
	// no executor took is answered at once by the server: no responders.)
	for poll := time.Second; ; poll = min(2*poll, 10*time.Second) {
		pctx, pcancel := context.WithTimeout(wctx, poll)
		m, err := f.sub.NextMsgWithContext(pctx)
		pcancel()
		if err == nil {
			return f.settle(m)
		}
		if errors.Is(err, nats.ErrNoResponders) {
			return f.fail(f.noExecutorError(ctx))
		}
		if obs, err, ok := f.result(); ok { // a concurrent call got it
			return obs, err
		}
		if why := f.lostReason(); why != "" {
			return nil, fmt.Errorf("sandbox %s: %w: %s while the batch ran; its observations are lost", f.sandbox.id, ErrSandboxGone, why)
		}
		if wctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return nil, f.waitError(ctx, err)
		}
		if err := f.goneError(ctx); err != nil {
			return nil, err
		}
	}
}

// watchLoss calls stop when an event says the sandbox restarted or
// stopped, so that Wait does not wait for an answer that cannot come.
func (f *Future) watchLoss(ctx context.Context, stop func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-f.events:
			var ev schemas.Event
			if json.Unmarshal(m.Data, &ev) != nil || !ev.Time.After(f.sent) {
				continue
			}
			lost := ev.Kind == schemas.EventExited ||
				(ev.Kind == schemas.EventStateChanged && ev.Sandbox != nil && ev.Sandbox.State == schemas.StateRunning && strings.HasPrefix(ev.Message, "restarted"))
			if !lost {
				continue
			}
			f.mu.Lock()
			f.lost = ev.Message
			f.mu.Unlock()
			// Give an answer already on its way a moment to arrive.
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			stop()
			return
		}
	}
}

func (f *Future) lostReason() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lost
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
	} else if errors.Is(err, nats.ErrNoResponders) {
		obs, err = f.fail(f.noExecutorError(context.Background()))
		return obs, true, err
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
	return f.finish(res.Observations, err)
}

// fail settles the future with err and no observations.
func (f *Future) fail(err error) ([]schemas.Observation, error) {
	return f.finish(nil, err)
}

// finish keeps the answer, unless one is already kept, and stops listening.
func (f *Future) finish(obs []schemas.Observation, err error) ([]schemas.Observation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.done:
		return f.obs, f.err
	default:
	}
	f.obs, f.err = obs, err
	f.sub.Unsubscribe()
	f.evSub.Unsubscribe()
	close(f.done)
	return f.obs, f.err
}

// noExecutorError explains a batch that no executor received (the server
// answered "no responders"): the sandbox does not exist, is not running, or
// its executor is not serving.
func (f *Future) noExecutorError(ctx context.Context) error {
	if err := f.goneError(ctx); err != nil {
		return err
	}
	return fmt.Errorf("sandbox %s: %w: no executor serves %s", f.sandbox.id, ErrSandboxGone, schemas.ActionsSubject(f.sandbox.id))
}

// waitError explains why no answer came: the sandbox does not exist, is not
// running, or simply did not answer in time.
func (f *Future) waitError(ctx context.Context, err error) error {
	if gerr := f.goneError(ctx); gerr != nil {
		return gerr
	}
	return fmt.Errorf("%w: sandbox %s: no observations after %s: %w", ErrTimeout, f.sandbox.id, time.Since(f.sent).Round(time.Millisecond), err)
}

// goneError says why the sandbox cannot answer (it does not exist or is not
// running), or is nil when it may still answer.
func (f *Future) goneError(ctx context.Context) error {
	c, err := f.sandbox.group.link()
	if err != nil {
		return nil
	}
	st, err := sandboxState(context.WithoutCancel(ctx), c, f.sandbox.id)
	switch {
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("sandbox %s: %w (it was ended or never created)", f.sandbox.id, ErrNotFound)
	case err == nil && st.State != schemas.StateRunning:
		return fmt.Errorf("sandbox %s is %s: %w: %s", f.sandbox.id, st.State, ErrSandboxGone, st.Reason)
	}
	return nil
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
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return st, fmt.Errorf("%w: %v", ErrNotFound, err)
	} else if err != nil {
		return st, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := json.Unmarshal(e.Value(), &st); err != nil {
		return st, fmt.Errorf("%w: %v", ErrInternal, err)
	}
	return st, nil
}
