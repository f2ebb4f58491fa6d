package sandboxes

import (
	"context"
	"errors"
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
func (s *Service) resourceKinds() []resourceKind {
	return []resourceKind{
		{name: resContainer, holders: s.containerHolders, release: s.releaseStaleContainer},
		{name: resIdentity, holders: s.ids.Holders, release: s.ids.Revoke},
		{name: resDisk, holders: s.diskHolders, release: s.releaseStaleDisk},
		{name: resLedger, holders: s.ledgerHolders, release: s.ledger.Release},
	}
}

// reconcile releases, kind by kind, the resources held by sandboxes that
// no longer exist, so that disks, loop devices and ledger allocations do
// not leak past a worker that died. A failure is logged and leaves the
// resource for the next start; reconcile blocks until it is done.
func (s *Service) Reconcile(ctx context.Context) {
	for _, k := range s.resourceKinds() {
		ids, err := k.holders(ctx)
		if err != nil {
			s.log.Warn("list resources to reconcile", "kind", k.name, "err", err)
			continue
		}
		for _, id := range ids {
			_, _, err := s.store.Sandbox(ctx, id)
			if err == nil || !errors.Is(err, schemas.CodeNotFound) {
				continue
			}
			if err := k.release(ctx, id); err != nil {
				s.log.Warn("release the resource of a sandbox that no longer exists", "kind", k.name, "sandbox", id, "err", err)
				continue
			}
			s.log.Info("released the resource of a sandbox that no longer exists", "kind", k.name, "sandbox", id)
		}
	}
}

// diskHolders lists the sandboxes with a disk image.
func (s *Service) diskHolders(context.Context) ([]string, error) {
	if s.disks.pool == nil {
		return nil, nil
	}
	all, err := s.disks.pool.List()
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
func (s *Service) releaseStaleDisk(ctx context.Context, sandboxID string) error {
	if err := s.rt.RemoveVolume(ctx, runtime.VolumeName(sandboxID)); err != nil {
		return err
	}
	return s.detachDisk(sandboxID)
}

// ledgerHolders lists the sandboxes with an allocation in the engine's ledger.
func (s *Service) ledgerHolders(ctx context.Context) ([]string, error) {
	l, err := s.ledger.Read(ctx)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(l.Allocations)), nil
}
