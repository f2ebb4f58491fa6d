package sandboxes

import (
	"context"
	"errors"

	"github.com/sandox/sandox/internal/disks"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// DiskPool is where sandboxes with a disk limit get their /workspace: an
// ext4 image of the limit's size on a loop device, mounted by the engine as
// a local volume. Writes past the size fail with ENOSPC in that sandbox
// alone.
type DiskPool struct {
	pool Disks
	err  error // why disk limits cannot be enforced here, or nil
}

// Disks keeps the disk images of sandboxes, attached as block devices.
// *disks.Pool implements it; its doc comments say what each call does.
type Disks interface {
	Attach(ctx context.Context, name string, size int64, uid, gid int) (disks.Disk, error)
	Detach(name string) error
	List() ([]disks.Disk, error)
	Capacity() (int64, error)
}

var _ Disks = (*disks.Pool)(nil)

// OpenDisks returns the disk pool in dir, or one that says why disk limits
// cannot be enforced: no dir, or a host without loop devices.
func OpenDisks(dir string) DiskPool {
	if dir == "" {
		return NoDisks(errors.New("this orchestrator has no disks directory configured"))
	}
	p := &disks.Pool{Dir: dir}
	if err := p.Check(); err != nil {
		return NoDisks(err)
	}
	return UseDisks(p)
}

// UseDisks returns the disk pool of d.
func UseDisks(d Disks) DiskPool { return DiskPool{pool: d} }

// NoDisks returns a disk pool that refuses disk limits because of err.
func NoDisks(err error) DiskPool { return DiskPool{err: err} }

// Err says why disk limits cannot be enforced, or is nil.
func (p DiskPool) Err() error { return p.err }

// diskSupport says why a disk limit cannot be enforced, or nil.
func (s *Service) diskSupport() error {
	if err := s.disks.err; err != nil {
		return schemas.Errorf(schemas.CodeUnsupported, "compute.disk: this host cannot enforce a disk limit: %w", err)
	}
	return nil
}

// diskCapacity is the size of the file system holding the disk images,
// against which a relative disk amount resolves; 0 when unknown.
func (s *Service) diskCapacity() int64 {
	if s.disks.pool == nil {
		return 0
	}
	n, err := s.disks.pool.Capacity()
	if err != nil {
		s.log.Warn("disk capacity unknown", "dir", s.cfg.DisksDir, "err", err)
		return 0
	}
	return n
}

// attachDisk makes the disk of a sandbox with a disk limit and sets the
// volume spec that mounts it as its workspace; it does nothing for a
// sandbox without one.
func (s *Service) attachDisk(ctx context.Context, st *schemas.SandboxStatus, vol *runtime.VolumeSpec) error {
	if st.Resources.DiskBytes == 0 {
		return nil
	}
	if err := s.diskSupport(); err != nil {
		return err
	}
	d, err := s.disks.pool.Attach(ctx, st.ID, st.Resources.DiskBytes, UID, UID)
	switch {
	case errors.Is(err, disks.ErrNoSpace):
		return schemas.Errorf(schemas.CodeResourceExhausted, "compute.disk: %w", err)
	case errors.Is(err, disks.ErrInvalid):
		return schemas.Errorf(schemas.CodeBadRequest, "compute.disk: %w", err)
	case err != nil:
		return err
	}
	st.DiskDevice = d.Device
	vol.Device, vol.FSType = d.Device, "ext4"
	return nil
}

// detachDisk removes the disk of a sandbox, if it has one. The volume that
// mounted it must be gone first.
func (s *Service) detachDisk(sandboxID string) error {
	if s.disks.pool == nil {
		return nil
	}
	return s.disks.pool.Detach(sandboxID)
}
