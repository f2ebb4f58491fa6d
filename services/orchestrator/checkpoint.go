package orchestrator

import (
	"context"
	"errors"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/checkpoints"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// newCheckpoints opens the checkpoint store and returns the service over
// it, or nil when the engine cannot copy files out of containers (then the
// checkpoint commands are refused as unsupported).
func newCheckpoints(ctx context.Context, w *Worker, arch checkpoints.Archiver) (*checkpoints.Service, error) {
	if arch == nil {
		return nil, nil
	}
	// Like the other buckets, the store waits for a cluster that is still
	// electing its leaders rather than stopping the worker.
	var store *checkpoints.Store
	if err := waitForBus(ctx, w.cfg.BusWait, w.log, "checkpoint store", func(ctx context.Context) (err error) {
		store, err = checkpoints.OpenStore(ctx, w.js, checkpoints.StoreConfig{Replicas: state.Replicas(w.nc, w.cfg.Replicas)})
		return err
	}); err != nil {
		return nil, err
	}
	return checkpoints.New(store, arch, checkpoints.Config{Workspace: workspaceDir, UID: sandboxUID, User: images.SandboxUser}), nil
}

// checkpointCommand runs a checkpoint command (schemas.TakeCheckpoint,
// ListCheckpoints, DiffCheckpoints, RollbackSandbox) on the sandbox's
// host, holding the sandbox's lock. Taking and rolling back need a running
// sandbox (CodeConflict otherwise); listing and comparing stored
// checkpoints do not, and work after the sandbox has ended.
func (w *Worker) checkpointCommand(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	if w.checkpoints == nil {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeUnsupported, "%s: this orchestrator's engine cannot copy files out of containers", cmd.Kind)
	}
	req := schemas.CheckpointRequest{}
	if cmd.Checkpoint != nil {
		req = *cmd.Checkpoint
	}
	if err := schemas.ValidateID("sandbox", cmd.SandboxID); err != nil {
		return schemas.CommandResult{}, err
	}
	unlock := w.locks.lock(sandboxKey(cmd.SandboxID))
	defer unlock()
	st, _, err := w.store.Sandbox(ctx, cmd.SandboxID)
	exists := err == nil
	if err != nil && !errors.Is(err, schemas.CodeNotFound) {
		return schemas.CommandResult{}, err
	}
	running := ""
	if exists {
		if err := w.actable(st); err != nil {
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
			c, err = w.checkpoints.Take(ctx, sb, req.Name, false)
		} else {
			c, err = w.checkpoints.Rollback(ctx, sb, req.Ref)
		}
		if err != nil {
			return schemas.CommandResult{}, err
		}
		return schemas.CommandResult{Checkpoints: []schemas.Checkpoint{c}, Sandboxes: []schemas.SandboxStatus{st}}, nil
	case schemas.ListCheckpoints:
		list, err := w.checkpoints.List(ctx, cmd.SandboxID, running)
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
		d, err := w.checkpoints.Diff(ctx, cmd.SandboxID, req.Ref, req.To, running)
		if err != nil {
			return schemas.CommandResult{}, err
		}
		return schemas.CommandResult{Diff: &d}, nil
	}
}

// restoreFork fills the workspace of st, a sandbox just created from
// checkpoint ref (nil: not a fork), before it starts.
func (w *Worker) restoreFork(ctx context.Context, st schemas.SandboxStatus, ref *schemas.CheckpointRef) error {
	if ref == nil {
		return nil
	}
	if w.checkpoints == nil {
		return schemas.Errorf(schemas.CodeUnsupported, "from_checkpoint: this orchestrator's engine cannot copy files into containers")
	}
	if _, err := w.checkpoints.Restore(ctx, st.Container, *ref); err != nil {
		return err
	}
	return nil
}
