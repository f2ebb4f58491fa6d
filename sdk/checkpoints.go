package sdk

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/sandox/sandox/schemas"
)

// checkpointCommand sends a checkpoint command on the sandbox and waits
// for its result.
func (s *Sandbox) checkpointCommand(ctx context.Context, kind schemas.CommandKind, req schemas.CheckpointRequest) (schemas.CommandResult, error) {
	c, err := s.group.link()
	if err != nil {
		return schemas.CommandResult{}, err
	}
	return c.command(ctx, schemas.Command{Kind: kind, GroupID: s.group.spec.ID, SandboxID: s.id, Checkpoint: &req})
}

// Checkpoint saves the sandbox's workspace in the checkpoint store, outside
// the sandbox, and returns the new checkpoint: its id, file count, bytes,
// the bytes no earlier checkpoint had (only those are stored) and how long
// it took. name is optional; a name the sandbox has used is
// ErrAlreadyExists, a bad one ErrBadRequest. A sandbox that is not running
// is ErrConflict; a full store ErrResourceExhausted. It blocks until the
// checkpoint is stored (the command timeout unless ctx has a deadline).
func (s *Sandbox) Checkpoint(ctx context.Context, name string) (schemas.Checkpoint, error) {
	res, err := s.checkpointCommand(ctx, schemas.TakeCheckpoint, schemas.CheckpointRequest{Name: name})
	if err != nil {
		return schemas.Checkpoint{}, err
	}
	return oneCheckpoint(res)
}

// Checkpoints lists the sandbox's checkpoints, oldest first. While the
// sandbox runs, each carries in ChangedSince the paths that differ between
// it and the workspace now. The checkpoints of a sandbox that has ended
// are listed too; a sandbox that never existed is ErrNotFound.
func (s *Sandbox) Checkpoints(ctx context.Context) ([]schemas.Checkpoint, error) {
	res, err := s.checkpointCommand(ctx, schemas.ListCheckpoints, schemas.CheckpointRequest{})
	if err != nil {
		return nil, err
	}
	return res.Checkpoints, nil
}

// DiffCheckpoints lists the paths added, changed and removed from
// checkpoint from to checkpoint to (ids or names), or, when to is empty,
// to the workspace now (the sandbox must run: ErrConflict otherwise). An
// unknown checkpoint is ErrNotFound.
func (s *Sandbox) DiffCheckpoints(ctx context.Context, from, to string) (schemas.CheckpointDiff, error) {
	res, err := s.checkpointCommand(ctx, schemas.DiffCheckpoints, schemas.CheckpointRequest{Ref: from, To: to})
	if err != nil {
		return schemas.CheckpointDiff{}, err
	}
	if res.Diff == nil {
		return schemas.CheckpointDiff{}, fmt.Errorf("%w: %s answered without a diff", ErrInternal, schemas.DiffCheckpoints)
	}
	return *res.Diff, nil
}

// Rollback puts the sandbox's workspace back as checkpoint ref (an id or a
// name) saved it, and returns that checkpoint. A rollback that fails
// leaves the workspace as it was: a disk too full to stage the
// checkpoint's files is ErrResourceExhausted, an unknown checkpoint
// ErrNotFound, a sandbox that is not running ErrConflict.
func (s *Sandbox) Rollback(ctx context.Context, ref string) (schemas.Checkpoint, error) {
	res, err := s.checkpointCommand(ctx, schemas.RollbackSandbox, schemas.CheckpointRequest{Ref: ref})
	if err != nil {
		return schemas.Checkpoint{}, err
	}
	return oneCheckpoint(res)
}

// Fork creates a new sandbox in the group for each id, every one filled
// with the files of checkpoint ref of this sandbox before it starts, and
// starts them all, in parallel; opts apply to each (its FromCheckpoint is
// set here). It returns the sandboxes in the order of ids once all run;
// on an error the sandboxes made so far are returned too, so the caller
// can end them.
func (s *Sandbox) Fork(ctx context.Context, ref string, ids []string, opts SandboxOptions) ([]*Sandbox, error) {
	opts.FromCheckpoint = &schemas.CheckpointRef{SandboxID: s.id, Checkpoint: ref}
	out := make([]*Sandbox, len(ids))
	var eg errgroup.Group
	for i, id := range ids {
		eg.Go(func() error {
			sb, err := s.group.CreateSandbox(ctx, id, opts)
			if err != nil {
				return fmt.Errorf("fork %s from checkpoint %s of sandbox %s: %w", id, ref, s.id, err)
			}
			out[i] = sb
			return sb.Start(ctx)
		})
	}
	err := eg.Wait()
	made := out[:0:0]
	for _, sb := range out {
		if sb != nil {
			made = append(made, sb)
		}
	}
	if err != nil {
		return made, err
	}
	return out, nil
}

func oneCheckpoint(res schemas.CommandResult) (schemas.Checkpoint, error) {
	if len(res.Checkpoints) != 1 {
		return schemas.Checkpoint{}, fmt.Errorf("%w: %s answered with %d checkpoints", ErrInternal, res.Kind, len(res.Checkpoints))
	}
	return res.Checkpoints[0], nil
}
