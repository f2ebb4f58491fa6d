package orchestrator

import (
	"context"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// reconcileDatabases removes the database containers of groups that no
// longer have a record: a worker that died while ending a group, or while
// rolling back its start, can leave them running. Their volumes stay:
// whether the group kept its data went with its record, and data is not
// deleted on a guess (`sandox down` removes the volumes of its system).
// Like the containers kind of reconcile, it needs a system name, so that
// another system's databases on the same engine are never taken for
// leftovers. A failure is logged and left for the next start; it blocks
// until it is done.
func (w *Worker) reconcileDatabases(ctx context.Context) {
	if w.cfg.System == "" {
		return
	}
	cs, err := w.rt.List(ctx, w.ownLabels(runtime.LabelManaged+"=true", runtime.LabelDatabase)...)
	if err != nil {
		w.log.Warn("list database containers to reconcile", "err", err)
		return
	}
	for _, c := range cs {
		group := c.Labels[runtime.LabelGroup]
		if group == "" {
			continue
		}
		_, _, err := w.store.group(ctx, group)
		if err == nil || wireError(err).Code != schemas.CodeNotFound {
			continue
		}
		if err := w.rt.Remove(ctx, c.ID); err != nil {
			w.log.Warn("remove the database of a group that no longer exists", "group", group, "database", c.Labels[runtime.LabelDatabase], "err", err)
			continue
		}
		w.log.Info("removed the database of a group that no longer exists", "group", group, "database", c.Labels[runtime.LabelDatabase])
	}
}
