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
// SendActionsAsync. Wait blocks for it; Poll checks without blocking; Close
// gives it up. It is safe for concurrent use, and the answer, once in, is
// kept. A Future starts no goroutine: its sandbox's replyMux delivers into
// channels that Wait and Poll read.
type Future struct {
	sandbox *Sandbox
	conn    *conn
	batchID string
	sent    time.Time

	// replies gets the batch's answer (or the server's no-responders
	// status); events gets the sandbox's events. Both are filled by the
	// NATS connection in the order the server sent the messages.
	replies chan *nats.Msg
	events  chan *nats.Msg

	mu    sync.Mutex
	reply *nats.Subscription // the batch's reply subject; nil once settled or closed
	unmux func()             // leaves the sandbox's replyMux; nil once settled or closed
	obs   []schemas.Observation
	err   error
	done  chan struct{}
	unwat func() // removes the future from its group's open futures
}

// BatchID identifies the batch; its observations are recorded under
// sandox.obs.<sandbox>.<batch id>.
func (f *Future) BatchID() string { return f.batchID }

// Done is closed when the future is settled: its answer arrived, the
// sandbox was found gone, or Close was called.
func (f *Future) Done() <-chan struct{} { return f.done }

// Wait blocks until the observations arrive, the sandbox is found gone
// (ErrSandboxGone, ErrNotFound), or ctx ends (with no deadline, the group's
// action timeout applies; then Wait asks the sandbox's status once, for up
// to 5 s, and returns why it cannot answer or else ErrTimeout). While it
// waits it asks the orchestrator for the sandbox's status after 1 s, then
// at intervals doubling to 10 s. After a deadline the batch may
// still finish in the sandbox, and Wait can be called again; after any
// other outcome Wait returns the same answer again. Wait after Close
// returns ErrClosed unless the answer had arrived.
func (f *Future) Wait(ctx context.Context) ([]schemas.Observation, error) {
	ctx, cancel := withDefault(ctx, f.conn.opts.actionTimeout)
	defer cancel()
	// Between messages, ask the orchestrator whether the sandbox still
	// runs: an executor that took the batch and went away without an
	// event (a lost host) never answers.
	poll := time.Second
	timer := time.NewTimer(poll)
	defer timer.Stop()
	for {
		select {
		case <-f.done:
			return f.result()
		case m := <-f.replies:
			f.settleReply(ctx, m)
		case m := <-f.events:
			f.onEvent(m)
		case <-timer.C:
			if err := f.goneError(ctx); err != nil {
				f.settle(nil, err)
			}
			poll = min(2*poll, 10*time.Second)
			timer.Reset(poll)
		case <-ctx.Done():
			return nil, f.waitError(ctx)
		}
	}
}

// Poll returns the observations if they have arrived: done reports whether
// the future is settled. It does not wait for the answer; only when NATS
// reports that no executor took the batch does it ask the orchestrator for
// the sandbox's status (up to 5 s) to say why.
func (f *Future) Poll() (obs []schemas.Observation, done bool, err error) {
	for {
		select {
		case <-f.done:
			obs, err = f.result()
			return obs, true, err
		case m := <-f.replies:
			f.settleReply(context.Background(), m)
		case m := <-f.events:
			f.onEvent(m)
		default:
			return nil, false, nil
		}
	}
}

// Close gives the future up: it drops its reply subscription, and Wait and
// Poll return ErrClosed from then on, unless the answer had already
// arrived. The batch itself still runs in the sandbox. Close is idempotent
// and never blocks.
func (f *Future) Close() error {
	f.settle(nil, fmt.Errorf("sandbox %s: batch %s: %w", f.sandbox.id, f.batchID, ErrClosed))
	return nil
}

// release drops the future's reply subscription and takes it off its
// sandbox's replyMux.
func (f *Future) release() {
	if f.reply != nil {
		_ = f.reply.Unsubscribe()
		f.reply = nil
	}
	if f.unmux != nil {
		f.unmux()
		f.unmux = nil
	}
}

func (f *Future) result() ([]schemas.Observation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.obs, f.err
}

// settle records the future's outcome once and takes the future off its
// sandbox's replyMux; later calls change nothing.
func (f *Future) settle(obs []schemas.Observation, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.done:
		return
	default:
	}
	f.obs, f.err = obs, err
	f.release()
	close(f.done)
	if f.unwat != nil {
		f.unwat()
	}
}

// settleReply settles the future with the batch's answer, or, for the
// server's no-responders status (no executor serves the sandbox), with why
// the sandbox does not answer.
func (f *Future) settleReply(ctx context.Context, m *nats.Msg) {
	if noResponders(m) {
		err := f.pausedError(ctx)
		if err == nil {
			err = fmt.Errorf("sandbox %s: %w: no executor serves %s", f.sandbox.id, ErrSandboxGone, schemas.ActionsSubject(f.sandbox.id))
		}
		f.settle(nil, err)
		return
	}
	var res schemas.BatchResult
	if err := json.Unmarshal(m.Data, &res); err != nil {
		f.settle(nil, fmt.Errorf("%w: decode observations of sandbox %s: %w", ErrInternal, f.sandbox.id, err))
		return
	}
	if res.Error != nil {
		f.settle(res.Observations, fmt.Errorf("sandbox %s: %w", f.sandbox.id, fromWire(res.Error)))
		return
	}
	f.settle(res.Observations, nil)
}

// onEvent settles the future as lost when the event's kind says an
// unanswered batch will not be answered. The future subscribed to the
// events before it sent the batch, so every event it gets happened after
// that: no clocks are compared. The executor answers on the same server
// before the orchestrator can see it gone, so an answer sent before the
// loss is already in replies and is taken first.
func (f *Future) onEvent(m *nats.Msg) {
	var ev schemas.Event
	if json.Unmarshal(m.Data, &ev) != nil || !ev.Kind.LosesBatches() {
		return
	}
	select {
	case r := <-f.replies:
		f.settleReply(context.Background(), r)
		return
	default:
	}
	why := ev.Reason
	if why == "" {
		why = ev.Message
	}
	f.settle(nil, fmt.Errorf("sandbox %s: %w: %s (%s) while the batch ran; its observations are lost", f.sandbox.id, ErrSandboxGone, ev.Kind, why))
}

// waitError explains why no answer came before ctx ended: the sandbox is
// gone, or it did not answer in time.
func (f *Future) waitError(ctx context.Context) error {
	if err := f.goneError(ctx); err != nil {
		f.settle(nil, err)
		return err
	}
	return fmt.Errorf("%w: sandbox %s: no observations after %s: %w", ErrTimeout, f.sandbox.id, time.Since(f.sent).Round(time.Millisecond), ctx.Err())
}

// goneError asks the orchestrator whether the sandbox can still answer: it
// says why not (it does not exist or is not running), or is nil when it
// may (or the orchestrator does not answer).
func (f *Future) goneError(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	st, err := f.conn.sandboxStatus(rctx, f.sandbox.id)
	switch {
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("sandbox %s: %w (it was ended or never created)", f.sandbox.id, err)
	case err == nil && st.State == schemas.StatePaused:
		// Paused with the batch in hand: it answers after the resume.
		return nil
	case err == nil && st.State != schemas.StateRunning:
		return fmt.Errorf("sandbox %s is %s: %w: %s", f.sandbox.id, st.State, ErrSandboxGone, st.Reason)
	}
	return nil
}

// noResponders reports whether m is the server's status message saying
// that nobody subscribes to the subject a request was published on.
func noResponders(m *nats.Msg) bool {
	return len(m.Data) == 0 && m.Header.Get("Status") == "503"
}
