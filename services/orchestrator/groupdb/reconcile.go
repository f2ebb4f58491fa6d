package groupdb

import (
	"context"
	"errors"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// Reconcile removes the database containers of groups that no
// longer have a record: a worker that died while ending a group, or while
// rolling back its start, can leave them running. Their volumes stay:
// whether the group kept its data went with its record, and data is not
// deleted on a guess (`sandox down` removes the volumes of its system).
// Like the containers kind of reconcile, it needs a system name, so that
// another system's databases on the same engine are never taken for
// leftovers. A failure is logged and left for the next start; it blocks
// until it is done.
func (d *Databases) Reconcile(ctx context.Context) {
	if d.cfg.System == "" {
		return
	}
	cs, err := d.rt.List(ctx, d.ownLabels(runtime.LabelManaged+"=true", runtime.LabelDatabase)...)
	if err != nil {
		d.log.Warn("list database containers to reconcile", "err", err)
		return
	}
	for _, c := range cs {
		group := c.Labels[runtime.LabelGroup]
		if group == "" {
			continue
		}
		_, _, err := d.store.Group(ctx, group)
		var se *schemas.Error
		if err == nil || !errors.As(err, &se) || se.Code != schemas.CodeNotFound {
			continue
		}
		if err := d.rt.Remove(ctx, c.ID); err != nil {
			d.log.Warn("remove the database of a group that no longer exists", "group", group, "database", c.Labels[runtime.LabelDatabase], "err", err)
			continue
		}
		d.log.Info("removed the database of a group that no longer exists", "group", group, "database", c.Labels[runtime.LabelDatabase])
	}
}

// ownLabels adds the label of this system to filters, when it has one.
func (d *Databases) ownLabels(filters ...string) []string {
	if d.cfg.System != "" {
		filters = append(filters, runtime.LabelSystem+"="+d.cfg.System)
	}
	return filters
}
