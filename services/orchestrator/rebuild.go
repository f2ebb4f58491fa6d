package orchestrator

import (
	"context"
	"errors"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// containerHolders lists the sandboxes of this worker's system that have a
// container on the engine. Without a system name it lists none: the
// engine's containers could be another sandox system's.
func (w *Worker) containerHolders(ctx context.Context) ([]string, error) {
	if w.cfg.System == "" {
		return nil, nil
	}
	cs, err := w.rt.List(ctx, w.ownLabels(runtime.LabelManaged+"=true")...)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		if id := c.Labels[runtime.LabelSandbox]; id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// releaseStaleContainer removes the container of a sandbox that has no
// record, and its workspace volume, with every other resource a sandbox
// may hold (each tolerates being absent).
func (w *Worker) releaseStaleContainer(ctx context.Context, sandboxID string) error {
	return w.removeSandboxResources(ctx, runtime.ContainerName(sandboxID), sandboxID)
}

// markLost marks lost (reason container_missing), with an exited event,
// every sandbox of this worker's host whose container the engine no
// longer has (removed by hand, or an engine whose data was lost). A record
// without a container id is being created and is left alone, as is one
// being ended; the sandboxes of other hosts are theirs to check. It runs
// at start, after reconcile.
func (w *Worker) markLost(ctx context.Context) {
	ids, err := w.store.SandboxIDs(ctx)
	if err != nil {
		w.log.Warn("list sandboxes to check for lost containers", "err", err)
		return
	}
	for _, id := range ids {
		st, _, err := w.store.Sandbox(ctx, id)
		if err != nil || st.Container == "" || !w.ownedHere(st.Host) {
			continue
		}
		if _, err := w.rt.Inspect(ctx, st.Container); !errors.Is(err, runtime.ErrNotFound) {
			continue
		}
		w.markSandboxLost(ctx, id, st.Container, schemas.LostContainerMissing, "its container no longer exists on the engine of host "+w.hostName)
	}
}
