package sandboxes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// PauseOrResume runs pause_sandbox or resume_sandbox on a sandbox of this
// host (route sends them to the sandbox's host). An engine without a
// Freezer refuses both as unsupported.
func (s *Service) PauseOrResume(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	if schemas.IsPoolID(cmd.SandboxID) {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeBadRequest, "sandbox id %q is the warm pool's: a pooled sandbox is not paused", cmd.SandboxID)
	}
	st, unlock, err := s.lockSandbox(ctx, cmd)
	defer unlock()
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if err := s.actable(st); err != nil {
		return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, err
	}
	if s.freezer == nil {
		return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, schemas.Errorf(schemas.CodeUnsupported, "sandbox %s: this host's engine cannot freeze containers, so it cannot pause sandboxes", st.ID)
	}
	if cmd.Kind == schemas.PauseSandbox {
		st, err = s.pauseSandbox(ctx, st, cmd.ID)
	} else {
		st, err = s.resumeSandbox(ctx, st, cmd.ID)
	}
	return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, err
}

// pauseSandbox holds the sandbox's executor (it stops taking batches),
// freezes the container's processes, releases the sandbox's CPU in the
// ledger and records it paused. A paused sandbox is paused again without
// a change, so that a redelivered command answers the same. Each step
// repeats harmlessly, so a pause whose worker died half way finishes when
// the command is delivered again.
func (s *Service) pauseSandbox(ctx context.Context, st schemas.SandboxStatus, cmdID string) (schemas.SandboxStatus, error) {
	switch st.State {
	case schemas.StatePaused:
		return st, nil
	case schemas.StateRunning:
	default:
		return st, schemas.Errorf(schemas.CodeConflict, "sandbox %q is %s: only a running sandbox can be paused", st.ID, st.State)
	}
	if err := s.hold(ctx, st.ID, true); err != nil {
		return st, err
	}
	if err := s.freezer.Pause(ctx, st.Container); err != nil {
		if herr := s.hold(context.WithoutCancel(ctx), st.ID, false); herr != nil {
			err = errors.Join(err, herr)
		}
		return st, fmt.Errorf("sandbox %s: pause: %w", st.ID, err)
	}
	if err := s.setLedgerCPU(ctx, st.ID, 0); err != nil {
		return st, fmt.Errorf("sandbox %s: release its CPU: %w", st.ID, err)
	}
	cur, err := s.store.UpdateSandbox(ctx, st.ID, func(s *schemas.SandboxStatus) error {
		if s.State != schemas.StateRunning {
			return schemas.Errorf(schemas.CodeConflict, "sandbox %q became %s while it was paused", s.ID, s.State)
		}
		s.State, s.PausedAt = schemas.StatePaused, time.Now().UTC()
		return nil
	})
	if err != nil {
		return st, err
	}
	s.publish(schemas.Event{Kind: schemas.EventPaused, GroupID: cur.GroupID, SandboxID: cur.ID, CommandID: cmdID, Message: "paused", Sandbox: &cur})
	return cur, nil
}

// resumeSandbox admits the paused sandbox's CPU again (CodeResourceExhausted
// when other sandboxes took it meanwhile: the sandbox stays paused), thaws
// its processes, has its executor take batches again and records it
// running. A resume that fails after the admission leaves the sandbox
// paused in its record, holding its CPU; resuming again finishes it.
func (s *Service) resumeSandbox(ctx context.Context, st schemas.SandboxStatus, cmdID string) (schemas.SandboxStatus, error) {
	if st.State != schemas.StatePaused {
		return st, schemas.Errorf(schemas.CodeConflict, "sandbox %q is %s, not paused", st.ID, st.State)
	}
	g, _, err := s.store.Group(ctx, st.GroupID)
	if err != nil {
		return st, err
	}
	host, err := s.Host(ctx)
	if err != nil {
		return st, err
	}
	if err := s.ledger.Admit(ctx, st.ID, st.Resources, host, g.Spec.Overcommit); err != nil {
		return st, fmt.Errorf("sandbox %s: resume: %w", st.ID, err)
	}
	if err := s.freezer.Unpause(ctx, st.Container); err != nil {
		if lerr := s.setLedgerCPU(context.WithoutCancel(ctx), st.ID, 0); lerr != nil {
			err = errors.Join(err, lerr)
		}
		return st, fmt.Errorf("sandbox %s: resume: %w", st.ID, err)
	}
	if err := s.hold(ctx, st.ID, false); err != nil {
		return st, err
	}
	cur, err := s.store.UpdateSandbox(ctx, st.ID, func(s *schemas.SandboxStatus) error {
		if s.State != schemas.StatePaused {
			return schemas.Errorf(schemas.CodeConflict, "sandbox %q became %s while it was resumed", s.ID, s.State)
		}
		s.State, s.ResumedAt = schemas.StateRunning, time.Now().UTC()
		return nil
	})
	if err != nil {
		return st, err
	}
	s.publish(schemas.Event{Kind: schemas.EventResumed, GroupID: cur.GroupID, SandboxID: cur.ID, CommandID: cmdID, Message: "resumed", Sandbox: &cur})
	return cur, nil
}

// setLedgerCPU sets the CPU of sandbox id's allocation in the engine's
// ledger to nanoCPUs, leaving its memory and disk: a paused sandbox's
// frozen processes keep their pages and its workspace its blocks. A
// sandbox without an allocation is no change.
func (s *Service) setLedgerCPU(ctx context.Context, id string, nanoCPUs int64) error {
	return s.ledger.Update(ctx, func(l *resources.Ledger) error {
		a, ok := l.Allocations[id]
		if !ok || a.NanoCPUs == nanoCPUs {
			return state.ErrUnchanged
		}
		a.NanoCPUs = nanoCPUs
		l.Allocations[id] = a
		return nil
	})
}

// holdAttempt bounds one hold request; hold retries for up to
// Config.ReadyTimeout, since an executor thawed after a long pause may be
// reconnecting (the server dropped its connection as stale).
const holdAttempt = 2 * time.Second

// hold tells the sandbox's executor to stop (on) or resume (off) serving
// its subjects other than the hold subject, and returns once it has. It
// fails with CodeUnavailable when the executor does not answer within
// Config.ReadyTimeout.
func (s *Service) hold(ctx context.Context, id string, on bool) error {
	data, err := json.Marshal(schemas.HoldRequest{Hold: on})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, max(s.cfg.ReadyTimeout, holdAttempt))
	defer cancel()
	for {
		actx, acancel := context.WithTimeout(ctx, holdAttempt)
		m, err := s.nc.RequestWithContext(actx, schemas.HoldSubject(id), data)
		acancel()
		if err == nil {
			var reply schemas.HoldReply
			if err := json.Unmarshal(m.Data, &reply); err != nil {
				return fmt.Errorf("sandbox %s: decode hold reply: %w", id, err)
			}
			if reply.Error != nil {
				return fmt.Errorf("sandbox %s: hold: %w", id, reply.Error)
			}
			return nil
		}
		if ctx.Err() != nil {
			return schemas.Errorf(schemas.CodeUnavailable, "sandbox %s: its executor did not answer on %s (hold %t): %w", id, schemas.HoldSubject(id), on, err)
		}
		// No responders (the executor reconnecting) or a closed
		// connection answer at once: wait a little before the next try.
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
