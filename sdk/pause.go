package sdk

import (
	"context"
	"fmt"
	"time"

	"github.com/sandox/sandox/schemas"
)

// Pause freezes the sandbox's processes and releases its CPU to other
// sandboxes; its workspace, memory and running jobs and terminal sessions
// are kept, and go on where they were after Resume. It blocks until the
// sandbox is paused. A batch it had taken is answered after the resume;
// one sent while it is paused fails at once with ErrPaused. Pausing a
// paused sandbox is no error; one that is not running is ErrConflict, and
// an engine that cannot freeze containers ErrUnsupported.
func (s *Sandbox) Pause(ctx context.Context) error {
	if _, err := s.lifecycle(ctx, schemas.PauseSandbox); err != nil {
		return fmt.Errorf("pause sandbox %s: %w", s.id, err)
	}
	return nil
}

// Resume thaws a paused sandbox and blocks until its executor takes
// batches again. The sandbox's CPU is admitted again first: when other
// sandboxes took it meanwhile the sandbox stays paused and Resume returns
// ErrResourceExhausted, saying what is free. A sandbox that is not paused
// is ErrConflict.
func (s *Sandbox) Resume(ctx context.Context) error {
	if _, err := s.lifecycle(ctx, schemas.ResumeSandbox); err != nil {
		return fmt.Errorf("resume sandbox %s: %w", s.id, err)
	}
	return nil
}

// pausedError says why a batch met no executor: ErrPaused for a paused
// sandbox (its executor stops taking batches while it is paused), else
// what goneError says.
func (f *Future) pausedError(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	st, err := f.conn.sandboxStatus(rctx, f.sandbox.id)
	if err == nil && st.State == schemas.StatePaused {
		f.sandbox.setStatus(st)
		return fmt.Errorf("sandbox %s: %w: resume it to send actions (paused at %s)", f.sandbox.id, ErrPaused, st.PausedAt.Format("15:04:05.000Z07:00"))
	}
	return f.goneError(ctx)
}
