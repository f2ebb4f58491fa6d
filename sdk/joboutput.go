package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// JobEvent is one record of a job read from SANDOX_JOBS: a chunk of output
// or, last, the exit.
type JobEvent struct {
	// Seq is the record's sequence in SANDOX_JOBS. Output(ctx, Seq) resumes
	// right after it.
	Seq uint64
	// Output is a chunk of stdout or stderr; nil for the exit.
	Output *schemas.JobOutput
	// Exit is how the job ended; set on the last event only.
	Exit *schemas.JobExit
	// pending is how many of the job's records the stream held after this
	// one when it was delivered.
	pending uint64
}

// Output returns the job's records after stream sequence after (0 for all
// of them), in order, ending with the exit: it follows a running job as it
// writes. A client that lost its connection calls Output again with the
// Seq of the last event it handled and gets every later byte exactly
// once. Within one call, a chunk repeated by the sandbox (a publish it
// retried after the stream's duplicate window) is dropped by its offset.
// The sequence ends after the exit, at the first error (ErrNotFound for a
// job that never started, ErrSandboxGone when the sandbox restarts, exits
// or ends meanwhile, which takes the job's processes with it, or did so
// before the call, after the job's last stored record,
// ErrUnavailable when the stream cannot be read, the context's error when
// ctx ends), or when the caller stops ranging.
func (j *Job) Output(ctx context.Context, after uint64) iter.Seq2[JobEvent, error] {
	return func(yield func(JobEvent, error) bool) {
		info, err := j.exists(ctx)
		if err != nil {
			yield(JobEvent{}, err)
			return
		}
		// A lost job's records are still handed on; the error comes once
		// the stream has no more of them.
		lost := j.lost(ctx, info)
		if lost != nil {
			if m, err := j.lastMsg(ctx, schemas.JobSubjects(j.sandbox.id, j.id)); err == nil && m.Sequence <= after {
				yield(JobEvent{}, lost) // nothing after after
				return
			}
		}
		r, err := j.follow(ctx, schemas.JobSubjects(j.sandbox.id, j.id), after)
		if err != nil {
			yield(JobEvent{}, err)
			return
		}
		defer r.stop()
		next := map[string]int64{} // per stream: the offset expected next, once known
		for {
			m, err := r.msgs.Next()
			if err != nil {
				yield(JobEvent{}, j.readError(ctx, r, err))
				return
			}
			ev, ok, err := jobEvent(m, next)
			if err != nil {
				yield(JobEvent{}, err)
				return
			}
			if ok && (!yield(ev, nil) || ev.Exit != nil) {
				return
			}
			if lost != nil && ev.pending == 0 {
				yield(JobEvent{}, lost)
				return
			}
		}
	}
}

// Wait blocks until the job ended and returns its exit, read from
// SANDOX_JOBS: it needs no connection to the sandbox, and a job that ended
// long ago answers at once. A job that never started is ErrNotFound; a
// sandbox that restarts, exits or ends while the job runs, or did so
// before the call, is ErrSandboxGone (the job went with it); ctx bounds
// the wait.
func (j *Job) Wait(ctx context.Context) (schemas.JobExit, error) {
	info, err := j.exists(ctx)
	if err != nil {
		return schemas.JobExit{}, err
	}
	if err := j.lost(ctx, info); err != nil {
		return schemas.JobExit{}, err
	}
	exitSubject := schemas.JobSubject(j.sandbox.id, j.id, schemas.JobExitKind)
	r, err := j.follow(ctx, exitSubject, 0)
	if err != nil {
		return schemas.JobExit{}, err
	}
	defer r.stop()
	m, err := r.msgs.Next()
	if err == nil {
		return decodeExit(j.id, m.Data())
	}
	err = j.readError(ctx, r, err)
	if errors.Is(err, ErrSandboxGone) {
		// The job may have ended just before its executor did.
		if data, lerr := j.lastRecord(ctx, exitSubject); lerr == nil {
			return decodeExit(j.id, data)
		}
	}
	return schemas.JobExit{}, err
}

func decodeExit(job string, data []byte) (schemas.JobExit, error) {
	var exit schemas.JobExit
	if err := json.Unmarshal(data, &exit); err != nil {
		return exit, fmt.Errorf("%w: job %s: decode exit: %w", ErrInternal, job, err)
	}
	return exit, nil
}

// exists checks that the job's start is in SANDOX_JOBS and returns it.
func (j *Job) exists(ctx context.Context) (schemas.JobInfo, error) {
	var info schemas.JobInfo
	data, err := j.lastRecord(ctx, schemas.JobSubject(j.sandbox.id, j.id, schemas.JobStartKind))
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("%w: job %s: decode start: %w", ErrInternal, j.id, err)
	}
	return info, nil
}

// lost reports, as ErrSandboxGone, a job that has no exit record and whose
// executor went away after it started: its sandbox no longer runs, or
// stopped (and was restarted) since. Such a job will never write its exit.
// A job with an exit record, or whose sandbox the orchestrator cannot tell
// about (none answers), is not lost.
func (j *Job) lost(ctx context.Context, info schemas.JobInfo) error {
	if _, err := j.lastRecord(ctx, schemas.JobSubject(j.sandbox.id, j.id, schemas.JobExitKind)); !errors.Is(err, ErrNotFound) {
		return nil
	}
	c, err := j.sandbox.group.link()
	if err != nil {
		return nil
	}
	st, err := c.sandboxStatus(ctx, j.sandbox.id)
	switch {
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("%w: job %s: sandbox %s no longer exists", ErrSandboxGone, j.id, j.sandbox.id)
	case err != nil:
		return nil
	case st.State != schemas.StateRunning && st.State != schemas.StatePaused:
		return fmt.Errorf("%w: job %s: sandbox %s is %s", ErrSandboxGone, j.id, j.sandbox.id, st.State)
	case st.LastExitAt.After(info.StartedAt):
		return fmt.Errorf("%w: job %s: sandbox %s stopped at %s, after the job started", ErrSandboxGone, j.id, j.sandbox.id, st.LastExitAt.Format(time.RFC3339))
	}
	return nil
}

// lastRecord returns the data of the last record on subject in SANDOX_JOBS;
// none is ErrNotFound.
func (j *Job) lastRecord(ctx context.Context, subject string) ([]byte, error) {
	m, err := j.lastMsg(ctx, subject)
	if err != nil {
		return nil, err
	}
	return m.Data, nil
}

// lastMsg returns the last record on subject (which may hold wildcards) in
// SANDOX_JOBS; none is ErrNotFound.
func (j *Job) lastMsg(ctx context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	c, err := j.sandbox.group.link()
	if err != nil {
		return nil, err
	}
	ctx, cancel := withDefault(ctx, 10*time.Second)
	defer cancel()
	stream, err := c.js.Stream(ctx, schemas.JobStream)
	if err != nil {
		return nil, fmt.Errorf("%w: stream %s: %w", ErrUnavailable, schemas.JobStream, err)
	}
	m, err := stream.GetLastMsgForSubject(ctx, subject)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return nil, fmt.Errorf("job %s of sandbox %s: %w", j.id, j.sandbox.id, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("%w: job %s: %w", ErrUnavailable, j.id, err)
	}
	return m, nil
}

// jobReader reads a job's records. It stops when its context ends, when
// stop is called, or when the sandbox's executor goes away (an event whose
// kind loses batches: the job's processes went with it, and no exit
// record will come); gone then holds ErrSandboxGone.
type jobReader struct {
	msgs jetstream.MessagesContext
	stop func()
	gone atomic.Pointer[error]
}

// follow reads filter from SANDOX_JOBS after stream sequence after with an
// ordered consumer, watching the sandbox's events meanwhile.
func (j *Job) follow(ctx context.Context, filter string, after uint64) (*jobReader, error) {
	c, err := j.sandbox.group.link()
	if err != nil {
		return nil, err
	}
	events := make(chan *nats.Msg, 16)
	sub, err := c.nc.ChanSubscribe(schemas.SandboxEventSubject(j.sandbox.id), events)
	if err != nil {
		return nil, fmt.Errorf("%w: subscribe to %s: %w", ErrUnavailable, schemas.SandboxEventSubject(j.sandbox.id), err)
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}}
	if after > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	cctx, cancel := withDefault(ctx, 10*time.Second)
	defer cancel()
	cons, err := c.js.OrderedConsumer(cctx, schemas.JobStream, cfg)
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("%w: read job %s: %w", ErrUnavailable, j.id, err)
	}
	msgs, err := cons.Messages()
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("%w: read job %s: %w", ErrUnavailable, j.id, err)
	}
	r := &jobReader{msgs: msgs}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				msgs.Stop()
				return
			case <-done:
				return
			case m := <-events:
				var ev schemas.Event
				if json.Unmarshal(m.Data, &ev) == nil && ev.Kind.LosesBatches() {
					gone := fmt.Errorf("%w: job %s: sandbox %s %s", ErrSandboxGone, j.id, j.sandbox.id, ev.Kind)
					r.gone.Store(&gone)
					msgs.Stop()
					return
				}
			}
		}
	}()
	r.stop = func() {
		close(done)
		wg.Wait()
		_ = sub.Unsubscribe()
		msgs.Stop()
	}
	return r, nil
}

// readError is the error of a read of r that stopped: the context's when it
// ended, ErrSandboxGone when the executor went away, else ErrUnavailable.
func (j *Job) readError(ctx context.Context, r *jobReader, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("job %s: %w", j.id, ctx.Err())
	}
	if gone := r.gone.Load(); gone != nil {
		return *gone
	}
	return fmt.Errorf("%w: read job %s: %w", ErrUnavailable, j.id, err)
}

// jobEvent decodes record m; ok is false for a record not to hand on (the
// start, or a chunk already seen by its offset, which next tracks).
func jobEvent(m jetstream.Msg, next map[string]int64) (ev JobEvent, ok bool, err error) {
	meta, err := m.Metadata()
	if err != nil {
		return ev, false, fmt.Errorf("%w: job record: %w", ErrInternal, err)
	}
	ev.Seq, ev.pending = meta.Sequence.Stream, meta.NumPending
	switch kind := m.Subject()[strings.LastIndexByte(m.Subject(), '.')+1:]; kind {
	case schemas.JobExitKind:
		ev.Exit = new(schemas.JobExit)
		if err := json.Unmarshal(m.Data(), ev.Exit); err != nil {
			return ev, false, fmt.Errorf("%w: job exit: %w", ErrInternal, err)
		}
		return ev, true, nil
	case schemas.JobOutputKind:
	default:
		return ev, false, nil // the start
	}
	out := new(schemas.JobOutput)
	if err := json.Unmarshal(m.Data(), out); err != nil {
		return ev, false, fmt.Errorf("%w: job output: %w", ErrInternal, err)
	}
	if want, seen := next[out.Stream]; seen {
		end := out.Offset + int64(len(out.Data))
		if end <= want {
			return ev, false, nil
		}
		if out.Offset < want {
			out.Data, out.Offset = out.Data[want-out.Offset:], want
		}
	}
	next[out.Stream] = out.Offset + int64(len(out.Data))
	ev.Output = out
	return ev, true, nil
}
