package sandboxes

import (
	"context"
	"errors"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/checkpoints"
)

// Checkpoint runs a checkpoint command (schemas.TakeCheckpoint,
// ListCheckpoints, DiffCheckpoints, RollbackSandbox) on the sandbox's
// host, holding the sandbox's lock. Taking and rolling back need a running
// sandbox (CodeConflict otherwise); listing and comparing stored
// checkpoints do not, and work after the sandbox has ended.
func (s *Service) Checkpoint(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	if s.checkpoints == nil {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeUnsupported, "%s: this orchestrator's engine cannot copy files out of containers", cmd.Kind)
	}
	req := schemas.CheckpointRequest{}
	if cmd.Checkpoint != nil {
		req = *cmd.Checkpoint
	}
	if err := schemas.ValidateID("sandbox", cmd.SandboxID); err != nil {
		return schemas.CommandResult{}, err
	}
	st, unlock, err := s.lockSandbox(ctx, cmd)
	defer unlock()
	exists := err == nil
	if err != nil && !errors.Is(err, schemas.CodeNotFound) {
		return schemas.CommandResult{}, err
	}
	if !exists {
		// The sandbox ended (its checkpoints can still be listed and
		// compared), or is another group's: nothing of its record is used.
		st = schemas.SandboxStatus{}
	}
	running := ""
	if exists {
		if err := s.actable(st); err != nil {
			return schemas.CommandResult{}, err
		}
		if st.State == schemas.StateRunning {
			running = st.Container
		}
	}
	sb := checkpoints.Sandbox{ID: cmd.SandboxID, GroupID: st.GroupID, Container: running}
	switch cmd.Kind {
	case schemas.TakeCheckpoint, schemas.RollbackSandbox:
		if !exists {
			return schemas.CommandResult{}, schemas.Errorf(schemas.CodeNotFound, "sandbox %q not found", cmd.SandboxID)
		}
		if running == "" {
			return schemas.CommandResult{}, schemas.Errorf(schemas.CodeConflict, "sandbox %q is %s, not running", st.ID, st.State)
		}
		var c schemas.Checkpoint
		if cmd.Kind == schemas.TakeCheckpoint {
			c, err = s.checkpoints.Take(ctx, sb, req.Name, false)
		} else {
			c, err = s.checkpoints.Rollback(ctx, sb, req.Ref)
		}
		if err != nil {
			return schemas.CommandResult{}, err
		}
		return schemas.CommandResult{Checkpoints: []schemas.Checkpoint{c}, Sandboxes: []schemas.SandboxStatus{st}}, nil
	case schemas.ListCheckpoints:
		list, err := s.checkpoints.List(ctx, cmd.SandboxID, running)
		if err != nil {
			return schemas.CommandResult{}, err
		}
		if !exists && len(list) == 0 {
			return schemas.CommandResult{}, schemas.Errorf(schemas.CodeNotFound, "sandbox %q not found, and it left no checkpoints", cmd.SandboxID)
		}
		if list == nil {
			list = []schemas.Checkpoint{}
		}
		return schemas.CommandResult{Checkpoints: list}, nil
	default: // DiffCheckpoints
		d, err := s.checkpoints.Diff(ctx, cmd.SandboxID, req.Ref, req.To, running)
		if err != nil {
			return schemas.CommandResult{}, err
		}
		return schemas.CommandResult{Diff: &d}, nil
	}
}

// restoreFork fills the workspace of st, a sandbox just created from
// checkpoint ref (nil: not a fork), before it starts.
func (s *Service) restoreFork(ctx context.Context, st schemas.SandboxStatus, ref *schemas.CheckpointRef) error {
	if ref == nil {
		return nil
	}
	if s.checkpoints == nil {
		return schemas.Errorf(schemas.CodeUnsupported, "from_checkpoint: this orchestrator's engine cannot copy files into containers")
	}
	if _, err := s.checkpoints.Restore(ctx, st.Container, *ref); err != nil {
		return err
	}
	return nil
}
