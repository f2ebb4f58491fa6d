package disks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// imageSuffix ends the file name of every image: Dir/<name>.img.
const imageSuffix = ".img"

// Pool keeps the disk images of sandboxes in one directory (Dir) and
// attaches them to loop devices.
//
// A Pool is safe for concurrent use by several goroutines; Attach and
// Detach are serialised. Processes sharing a Dir (orchestrator workers on
// one engine) must never work on the same name at once; the orchestrator
// guarantees it, as one worker creates or ends a given sandbox. A Pool must
// not be copied after first use.
type Pool struct {
	// Dir holds the images. It is created, mode 0700, on first Attach.
	Dir string

	mu sync.Mutex // serialises Attach and Detach
}

// Disk is one attached image.
type Disk struct {
	Name      string // the name it was made under (a sandbox id)
	Image     string // absolute path of the sparse image file, Dir/<name>.img
	Device    string // the loop device, "/dev/loop3"; "" when not attached
	SizeBytes int64  // size of the image, and so of the file system
}

// Attach makes the image of name, if absent, as a sparse file of size bytes
// formatted ext4 with no reserved blocks and its root directory owned by
// uid:gid, and attaches it to a free loop device. ctx bounds the
// formatting; Attach blocks until it is done.
//
// Attach is idempotent. When the image is already attached it returns that
// Disk. When the image exists but is not attached, as after a reboot, it
// attaches it again without formatting it, since it holds the sandbox's
// files. In both cases size, uid and gid are ignored and the Disk reports
// the image's own size.
//
// It returns an ErrInvalid error for a bad name, a size below MinSize or a
// negative uid or gid, and an ErrNoSpace error when a new image would not
// fit in the free space of Dir's file system.
func (p *Pool) Attach(ctx context.Context, name string, size int64, uid, gid int) (Disk, error) {
	if err := errors.Join(validateName(name), validateSize(size), validateOwner(uid, gid)); err != nil {
		return Disk{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	dir, err := p.makeDir()
	if err != nil {
		return Disk{}, err
	}
	image := filepath.Join(dir, name+imageSuffix)
	if _, err := os.Stat(image); errors.Is(err, fs.ErrNotExist) {
		if err := makeImage(ctx, dir, image, size, uid, gid); err != nil {
			return Disk{}, fmt.Errorf("attach disk %s: %w", name, err)
		}
	} else if err != nil {
		return Disk{}, fmt.Errorf("attach disk %s: %w", name, err)
	}
	if d, ok, err := findImage(name, image); err != nil || ok {
		return d, err
	}
	dev, err := attachLoop(image)
	if err != nil {
		return Disk{}, fmt.Errorf("attach disk %s: %w", name, err)
	}
	return newDisk(name, image, dev)
}

// Detach detaches the loop device of name's image, if it is attached, and
// deletes the image. It is idempotent: when neither exists it returns nil.
//
// It returns an ErrBusy error, and keeps the image, when the device is
// still in use, usually because the Docker daemon has it mounted as a
// volume: remove the container and the volume first. It waits up to two
// seconds for a file system that is being unmounted to let go.
func (p *Pool) Detach(name string) error {
	if err := validateName(name); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	dir, ok, err := p.dir()
	if err != nil || !ok {
		return err
	}
	image := filepath.Join(dir, name+imageSuffix)
	bs, err := loopBindings()
	if err != nil {
		return fmt.Errorf("detach disk %s: %w", name, err)
	}
	for _, b := range bs {
		// A deleted backing file at this path is a device leaked by an
		// earlier run; detach it too.
		if b.backing != image {
			continue
		}
		if err := detachLoop(b); err != nil {
			return fmt.Errorf("detach disk %s: %w", name, err)
		}
	}
	for _, f := range []string{image, image + newSuffix} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("detach disk %s: %w", name, err)
		}
	}
	return nil
}

// Find returns the attached disk of name, and false if name has no image
// or its image is not attached. It returns an ErrInvalid error for a bad
// name.
func (p *Pool) Find(name string) (Disk, bool, error) {
	if err := validateName(name); err != nil {
		return Disk{}, false, err
	}
	dir, ok, err := p.dir()
	if err != nil || !ok {
		return Disk{}, false, err
	}
	return findImage(name, filepath.Join(dir, name+imageSuffix))
}

// List returns every image in Dir, sorted by name, with its device ("" when
// not attached), for reconciling after a restart. Files in Dir that a Pool
// did not make are left out.
func (p *Pool) List() ([]Disk, error) {
	dir, ok, err := p.dir()
	if err != nil || !ok {
		return nil, err
	}
	images, err := filepath.Glob(filepath.Join(dir, "*"+imageSuffix))
	if err != nil {
		return nil, fmt.Errorf("list disks in %s: %w", dir, err)
	}
	bs, err := loopBindings()
	if err != nil {
		return nil, fmt.Errorf("list disks: %w", err)
	}
	devices := map[string]string{}
	for _, b := range bs {
		if !b.deleted && devices[b.backing] == "" {
			devices[b.backing] = b.device
		}
	}
	var disks []Disk
	for _, image := range images {
		name := strings.TrimSuffix(filepath.Base(image), imageSuffix)
		if validateName(name) != nil {
			continue
		}
		d, err := newDisk(name, image, devices[image])
		if errors.Is(err, fs.ErrNotExist) {
			continue // detached since the glob
		}
		if err != nil {
			return nil, err
		}
		disks = append(disks, d)
	}
	return disks, nil
}

// DetachAll detaches and deletes every disk in Dir, as Detach does each;
// it goes on past a disk it cannot detach and returns every error.
func (p *Pool) DetachAll() error {
	all, err := p.List()
	errs := []error{err}
	for _, d := range all {
		errs = append(errs, p.Detach(d.Name))
	}
	return errors.Join(errs...)
}

// findImage returns the Disk of the file image if a loop device has it
// attached.
func findImage(name, image string) (Disk, bool, error) {
	bs, err := loopBindings()
	if err != nil {
		return Disk{}, false, fmt.Errorf("find disk %s: %w", name, err)
	}
	for _, b := range bs {
		if b.backing == image && !b.deleted {
			d, err := newDisk(name, image, b.device)
			return d, err == nil, err
		}
	}
	return Disk{}, false, nil
}

// newDisk describes image, reading its size from the file.
func newDisk(name, image, dev string) (Disk, error) {
	fi, err := os.Stat(image)
	if err != nil {
		return Disk{}, fmt.Errorf("disk %s: %w", name, err)
	}
	return Disk{Name: name, Image: image, Device: dev, SizeBytes: fi.Size()}, nil
}

// dir returns Dir as an absolute path with symlinks resolved, the form in
// which sysfs shows backing files, and false when it does not exist.
func (p *Pool) dir() (string, bool, error) {
	if p.Dir == "" {
		return "", false, fmt.Errorf("disk pool: Dir is empty: %w", ErrInvalid)
	}
	dir, err := filepath.Abs(p.Dir)
	if err != nil {
		return "", false, fmt.Errorf("disk pool %s: %w", p.Dir, err)
	}
	dir, err = filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("disk pool %s: %w", p.Dir, err)
	}
	return dir, true, nil
}

// makeDir creates Dir if it is missing and returns it as dir does.
func (p *Pool) makeDir() (string, error) {
	if p.Dir != "" {
		if err := os.MkdirAll(p.Dir, 0o700); err != nil {
			return "", fmt.Errorf("disk pool: %w", err)
		}
	}
	dir, _, err := p.dir()
	return dir, err
}
