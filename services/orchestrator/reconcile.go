package orchestrator

import (
	"context"
	"maps"
	"slices"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// A resourceKind is a kind of resource a sandbox holds outside its own
// record, which a worker that died half way through a create or an end
// could leave behind. Each kind says which sandboxes hold one and how to
// release the one of a sandbox that no longer exists. Networks,
// credentials and database namespaces join the list in resourceKinds as
// they are added.
type resourceKind struct {
	name string
	// holders lists the ids of the sandboxes that hold a resource of this kind.
	holders func(ctx context.Context) ([]string, error)
	// release frees the resource of a sandbox that no longer exists.
	release func(ctx context.Context, sandboxID string) error
}

// resourceKinds lists every kind of resource a worker reconciles at start.
// A sandbox's record is made before any of them and deleted after all of
// them are released, so a holder without a record is a leftover.
func (w *Worker) resourceKinds() []resourceKind {
	return []resourceKind{
		{name: resContainer, holders: w.containerHolders, release: w.releaseStaleContainer},
		{name: resIdentity, holders: w.ids.Holders, release: w.ids.Revoke},
		{name: resDisk, holders: w.diskHolders, release: w.releaseStaleDisk},
		{name: resLedger, holders: w.ledgerHolders, release: w.ledger.Release},
	}
}

// reconcile releases, kind by kind, the resources held by sandboxes that
// no longer exist, so that disks, loop devices and ledger allocations do
// not leak past a worker that died. A failure is logged and leaves the
// resource for the next start; reconcile blocks until it is done.
func (w *Worker) reconcile(ctx context.Context) {
	for _, k := range w.resourceKinds() {
		ids, err := k.holders(ctx)
		if err != nil {
			w.log.Warn("list resources to reconcile", "kind", k.name, "err", err)
			continue
		}
		for _, id := range ids {
			_, _, err := w.store.Sandbox(ctx, id)
			if err == nil || wireError(err).Code != schemas.CodeNotFound {
				continue
			}
			if err := k.release(ctx, id); err != nil {
				w.log.Warn("release the resource of a sandbox that no longer exists", "kind", k.name, "sandbox", id, "err", err)
				continue
			}
			w.log.Info("released the resource of a sandbox that no longer exists", "kind", k.name, "sandbox", id)
		}
	}
}

// diskHolders lists the sandboxes with a disk image.
func (w *Worker) diskHolders(context.Context) ([]string, error) {
	if w.disks.pool == nil {
		return nil, nil
	}
	all, err := w.disks.pool.List()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(all))
	for _, d := range all {
		ids = append(ids, d.Name)
	}
	return ids, nil
}

// releaseStaleDisk removes the volume that mounts a sandbox's disk, then
// detaches and deletes the disk.
func (w *Worker) releaseStaleDisk(ctx context.Context, sandboxID string) error {
	if err := w.rt.RemoveVolume(ctx, runtime.VolumeName(sandboxID)); err != nil {
		return err
	}
	return w.detachDisk(sandboxID)
}

// ledgerHolders lists the sandboxes with an allocation in the engine's ledger.
func (w *Worker) ledgerHolders(ctx context.Context) ([]string, error) {
	l, err := w.ledger.Read(ctx)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(l.Allocations)), nil
}
