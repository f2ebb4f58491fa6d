package orchestrator

import (
	"context"

	"github.com/sandox/sandox/services/orchestrator/checkpoints"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/sandboxes"
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
	return checkpoints.New(store, arch, checkpoints.Config{Workspace: sandboxes.Workspace, UID: sandboxes.UID, User: images.SandboxUser}), nil
}
