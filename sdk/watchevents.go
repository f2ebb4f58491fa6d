package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// WatchEvent is one record of a watch read from SANDOX_WATCH: a change
// or, last, the watch's stop.
type WatchEvent struct {
	// Seq is the record's sequence in SANDOX_WATCH. Events(ctx, Seq)
	// resumes right after it.
	Seq uint64
	// Event is a change (create, write, remove, rename), or an overflow
	// or truncated notice; nil for the stop.
	Event *schemas.WatchEvent
	// Stop is the watch's info as it stopped; set on the last event only.
	Stop *schemas.WatchInfo
}

// Events returns the watch's records after stream sequence after (0 for
// all of them), in order, ending with the stop: it follows a running watch
// as it reports. A client that lost its connection calls Events again
// with the Seq of the last event it handled and gets every later event
// exactly once. Within one call, an event repeated by the sandbox is
// dropped by its number. The sequence ends after the stop, at the first
// error (ErrNotFound for a watch that never started, ErrSandboxGone when
// the sandbox restarts, exits or ends meanwhile, ErrUnavailable when the
// stream cannot be read, the context's error when ctx ends), or when the
// caller stops ranging.
func (w *Watch) Events(ctx context.Context, after uint64) iter.Seq2[WatchEvent, error] {
	return func(yield func(WatchEvent, error) bool) {
		if err := w.exists(ctx); err != nil {
			yield(WatchEvent{}, err)
			return
		}
		what := "watch " + w.id
		r, err := w.sandbox.followStream(ctx, schemas.WatchStream, schemas.WatchSubjects(w.sandbox.id, w.id), what, after)
		if err != nil {
			yield(WatchEvent{}, err)
			return
		}
		defer r.stop()
		var seen int64 // the number of the last event handed on
		for {
			m, err := r.msgs.Next()
			if err != nil {
				yield(WatchEvent{}, w.readError(ctx, r, err))
				return
			}
			ev, ok, err := watchEvent(m, &seen)
			if err != nil {
				yield(WatchEvent{}, err)
				return
			}
			if ok && (!yield(ev, nil) || ev.Stop != nil) {
				return
			}
		}
	}
}

// exists checks that the watch's start is in SANDOX_WATCH.
func (w *Watch) exists(ctx context.Context) error {
	c, err := w.sandbox.group.link()
	if err != nil {
		return err
	}
	ctx, cancel := withDefault(ctx, 10*time.Second)
	defer cancel()
	stream, err := c.js.Stream(ctx, schemas.WatchStream)
	if err != nil {
		return fmt.Errorf("%w: stream %s: %w", ErrUnavailable, schemas.WatchStream, err)
	}
	_, err = stream.GetLastMsgForSubject(ctx, schemas.WatchSubject(w.sandbox.id, w.id, schemas.WatchStartKind))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return fmt.Errorf("watch %s of sandbox %s: %w", w.id, w.sandbox.id, ErrNotFound)
	case err != nil:
		return fmt.Errorf("%w: watch %s: %w", ErrUnavailable, w.id, err)
	}
	return nil
}

// readError is the error of a read of r that stopped: the context's when
// it ended, ErrSandboxGone when the executor went away, else
// ErrUnavailable.
func (w *Watch) readError(ctx context.Context, r *streamReader, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("watch %s: %w", w.id, ctx.Err())
	}
	if gone := r.gone.Load(); gone != nil {
		return *gone
	}
	return fmt.Errorf("%w: read watch %s: %w", ErrUnavailable, w.id, err)
}

// watchEvent decodes record m; ok is false for a record not to hand on
// (the start, or an event numbered at or below *seen, already handed on).
func watchEvent(m jetstream.Msg, seen *int64) (ev WatchEvent, ok bool, err error) {
	meta, err := m.Metadata()
	if err != nil {
		return ev, false, fmt.Errorf("%w: watch record: %w", ErrInternal, err)
	}
	ev.Seq = meta.Sequence.Stream
	switch kind := m.Subject()[strings.LastIndexByte(m.Subject(), '.')+1:]; kind {
	case schemas.WatchStopKind:
		ev.Stop = new(schemas.WatchInfo)
		if err := json.Unmarshal(m.Data(), ev.Stop); err != nil {
			return ev, false, fmt.Errorf("%w: watch stop: %w", ErrInternal, err)
		}
		return ev, true, nil
	case schemas.WatchEventKind:
	default:
		return ev, false, nil // the start
	}
	ev.Event = new(schemas.WatchEvent)
	if err := json.Unmarshal(m.Data(), ev.Event); err != nil {
		return ev, false, fmt.Errorf("%w: watch event: %w", ErrInternal, err)
	}
	if *seen > 0 && ev.Event.N <= *seen {
		return ev, false, nil
	}
	*seen = ev.Event.N
	return ev, true, nil
}
