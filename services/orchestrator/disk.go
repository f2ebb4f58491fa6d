package orchestrator

import (
	"context"
	"errors"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/disks"
)

// diskPool is where sandboxes with a disk limit get their /workspace: an
// ext4 image of the limit's size on a loop device, mounted by the engine as
// a local volume. Writes past the size fail with ENOSPC in that sandbox
// alone.
type diskPool struct {
	pool *disks.Pool
	err  error // why disk limits cannot be enforced here, or nil
}

func newDiskPool(dir string) diskPool {
	if dir == "" {
		return diskPool{err: errors.New("this orchestrator has no disks directory configured")}
	}
	p := &disks.Pool{Dir: dir}
	if err := p.Check(); err != nil {
		return diskPool{err: err}
	}
	return diskPool{pool: p}
}

// diskSupport says why a disk limit cannot be enforced, or nil.
func (w *Worker) diskSupport() error {
	if err := w.disks.err; err != nil {
		return schemas.Errorf(schemas.CodeUnsupported, "compute.disk: this host cannot enforce a disk limit: %w", err)
	}
	return nil
}

// diskCapacity is the size of the file system holding the disk images,
// against which a relative disk amount resolves; 0 when unknown.
func (w *Worker) diskCapacity() int64 {
	if w.disks.pool == nil {
		return 0
	}
	n, err := w.disks.pool.Capacity()
	if err != nil {
		w.log.Warn("disk capacity unknown", "dir", w.disks.pool.Dir, "err", err)
		return 0
	}
	return n
}

// volumeOptions makes the disk of a sandbox with a disk limit and returns
// the options that mount it as its workspace volume; nil when it has none.
func (w *Worker) volumeOptions(ctx context.Context, st *schemas.SandboxStatus) (map[string]string, error) {
	if st.Resources.DiskBytes == 0 {
		return nil, nil
	}
	if err := w.diskSupport(); err != nil {
		return nil, err
	}
	d, err := w.disks.pool.Attach(ctx, st.ID, st.Resources.DiskBytes, sandboxUID, sandboxUID)
	switch {
	case errors.Is(err, disks.ErrNoSpace):
		return nil, schemas.Errorf(schemas.CodeResourceExhausted, "compute.disk: %w", err)
	case errors.Is(err, disks.ErrInvalid):
		return nil, schemas.Errorf(schemas.CodeBadRequest, "compute.disk: %w", err)
	case err != nil:
		return nil, err
	}
	st.DiskDevice = d.Device
	return map[string]string{"type": "ext4", "device": d.Device}, nil
}

// detachDisk removes the disk of a sandbox, if it has one. The volume that
// mounted it must be gone first.
func (w *Worker) detachDisk(sandboxID string) error {
	if w.disks.pool == nil {
		return nil
	}
	return w.disks.pool.Detach(sandboxID)
}

// reconcileDisks detaches and deletes the disks of sandboxes that no longer
// exist (a worker that died between ending a sandbox and detaching its
// disk), so that loop devices and images do not leak.
func (w *Worker) reconcileDisks(ctx context.Context) {
	if w.disks.pool == nil {
		return
	}
	all, err := w.disks.pool.List()
	if err != nil {
		w.log.Warn("list sandbox disks", "err", err)
		return
	}
	for _, d := range all {
		_, _, err := w.store.sandbox(ctx, d.Name)
		if err == nil || wireError(err).Code != schemas.CodeNotFound {
			continue
		}
		if err := w.rt.RemoveVolume(ctx, VolumeName(d.Name)); err != nil {
			w.log.Warn("remove volume of a stale disk", "sandbox", d.Name, "err", err)
			continue
		}
		if err := w.disks.pool.Detach(d.Name); err != nil {
			w.log.Warn("detach stale disk", "sandbox", d.Name, "err", err)
			continue
		}
		w.log.Info("detached the disk of a sandbox that no longer exists", "sandbox", d.Name)
	}
}
