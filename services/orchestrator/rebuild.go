package orchestrator

import (
	"context"
	"errors"

	"github.com/sandox/sandox/schemas"
)

// containerHolders lists the sandboxes of this worker's system that have a
// container on the engine. Without a system name it lists none: the
// engine's containers could be another sandox system's.
func (w *Worker) containerHolders(ctx context.Context) ([]string, error) {
	if w.cfg.System == "" {
		return nil, nil
	}
	cs, err := w.rt.List(ctx, w.ownLabels(LabelManaged+"=true")...)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		if id := c.Labels[LabelSandbox]; id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// releaseStaleContainer removes the container of a sandbox that has no
// record, and its workspace volume, with every other resource a sandbox
// may hold (each tolerates being absent).
func (w *Worker) releaseStaleContainer(ctx context.Context, sandboxID string) error {
	return w.removeSandboxResources(ctx, ContainerName(sandboxID), sandboxID)
}

// markLost marks failed, with an exited event, every recorded sandbox whose
// container the engine no longer has (removed by hand, or an engine whose
// data was lost). A record without a container id is being created and is
// left alone, as is one being ended. It runs at start, after reconcile.
func (w *Worker) markLost(ctx context.Context) {
	ids, err := bucketKeys(ctx, w.store.sandboxes)
	if err != nil {
		w.log.Warn("list sandboxes to check for lost containers", "err", err)
		return
	}
	for _, id := range ids {
		st, _, err := w.store.sandbox(ctx, id)
		if err != nil || st.Container == "" || st.State == schemas.StateEnding || st.State == schemas.StateFailed {
			continue
		}
		if _, err := w.rt.Inspect(ctx, st.Container); !errors.Is(err, ErrNotFound) {
			continue
		}
		const reason = "lost: its container no longer exists on the engine"
		marked := false
		st, err = w.store.updateSandbox(ctx, id, func(cur *schemas.SandboxStatus) error {
			marked = false // a retry after another worker's write starts afresh
			if cur.Container != st.Container || cur.State == schemas.StateEnding || cur.State == schemas.StateFailed {
				return errUnchanged
			}
			cur.State, cur.Reason, marked = schemas.StateFailed, reason, true
			return nil
		})
		if err != nil || !marked {
			continue
		}
		w.log.Warn("sandbox lost", "sandbox", id, "container", st.Container)
		w.publishEvent(schemas.Event{Kind: schemas.EventExited, GroupID: st.GroupID, SandboxID: id, Reason: reason, Message: reason, Sandbox: &st})
	}
}
