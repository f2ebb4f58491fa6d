package memruntime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/sandox/sandox/internal/disks"
)

// Disks is an in-memory disk pool: a disk cannot be detached while a
// volume of rt mounts its device, as a loop device cannot. It is safe for
// concurrent use.
type Disks struct {
	rt       *Runtime
	capacity int64

	mu    sync.Mutex
	fail  func(op, name string) error
	disks map[string]disks.Disk
	next  int
}

func NewDisks(rt *Runtime) *Disks {
	return &Disks{rt: rt, capacity: 100 << 30, disks: map[string]disks.Disk{}}
}

func (d *Disks) SetFail(f func(op, name string) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail = f
}

func (d *Disks) check(op, name string) error {
	if d.fail == nil {
		return nil
	}
	if err := d.fail(op, name); err != nil {
		return fmt.Errorf("mem disk %s %s: %w", op, name, err)
	}
	return nil
}

func (d *Disks) Attach(_ context.Context, name string, size int64, _, _ int) (disks.Disk, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check("attach", name); err != nil {
		return disks.Disk{}, err
	}
	if size < disks.MinSize {
		return disks.Disk{}, fmt.Errorf("disk %s: %w", name, disks.ErrInvalid)
	}
	if disk, ok := d.disks[name]; ok {
		return disk, nil
	}
	d.next++
	disk := disks.Disk{Name: name, Image: "/mem/" + name + ".img", Device: fmt.Sprintf("/dev/loop%d", d.next), SizeBytes: size}
	d.disks[name] = disk
	return disk, nil
}

func (d *Disks) Detach(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check("detach", name); err != nil {
		return err
	}
	disk, ok := d.disks[name]
	if !ok {
		return nil
	}
	if d.rt.volumeOnDevice(disk.Device) {
		return fmt.Errorf("detach disk %s: %w", name, disks.ErrBusy)
	}
	delete(d.disks, name)
	return nil
}

func (d *Disks) List() ([]disks.Disk, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []disks.Disk
	for _, name := range slices.Sorted(maps.Keys(d.disks)) {
		out = append(out, d.disks[name])
	}
	return out, nil
}

func (d *Disks) Capacity() (int64, error) { return d.capacity, nil }

func (d *Disks) Count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.disks)
}
