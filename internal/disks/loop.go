package disks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

const (
	loopControl = "/dev/loop-control"
	sysBlock    = "/sys/block"
	loopMajor   = 7

	// attachTries is how often attachLoop asks for another free device
	// when another process takes the one it was given.
	attachTries = 5
	// busyWait is how long detachLoop waits for a busy device to be
	// released, such as a file system the kernel is still unmounting.
	busyWait = 2 * time.Second
)

// attachLoop attaches the file image to a free loop device and returns the
// device's path. The device stays attached until detachLoop: it is not set
// to clear itself when it is last closed, so the file system on it can be
// unmounted and mounted again.
func attachLoop(image string) (string, error) {
	img, err := unix.Open(image, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open image %s: %w", image, err)
	}
	defer unix.Close(img)
	ctl, err := unix.Open(loopControl, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", loopControl, err)
	}
	defer unix.Close(ctl)

	var lastErr error
	for range attachTries {
		n, err := unix.IoctlRetInt(ctl, unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return "", fmt.Errorf("find a free loop device: %w", err)
		}
		dev := "/dev/loop" + strconv.Itoa(n)
		err = bindLoop(dev, img, image)
		if errors.Is(err, unix.EBUSY) {
			lastErr = err // another process took dev between GET_FREE and SET_FD
			continue
		}
		if err != nil {
			return "", err
		}
		return dev, nil
	}
	return "", fmt.Errorf("attach %s: other processes took the free loop device %d times: %w", image, attachTries, lastErr)
}

// bindLoop attaches the open image file img to dev and names image as its
// backing file. It returns an error wrapping EBUSY when dev is already
// attached.
func bindLoop(dev string, img int, image string) error {
	fd, err := openDevice(dev, unix.O_RDWR)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.IoctlSetInt(fd, unix.LOOP_SET_FD, img); err != nil {
		return fmt.Errorf("attach %s to %s: %w", image, dev, err)
	}
	var info unix.LoopInfo64
	copy(info.File_name[:len(info.File_name)-1], image) // the kernel wants it NUL-terminated
	if err := unix.IoctlLoopSetStatus64(fd, &info); err != nil {
		// We are the only opener, so this detaches dev when fd closes.
		_ = unix.IoctlSetInt(fd, unix.LOOP_CLR_FD, 0)
		return fmt.Errorf("set status of %s: %w", dev, err)
	}
	return nil
}

// detachLoop detaches b.device from its backing file and waits until the
// kernel has done so. It returns an ErrBusy error when dev stays in use for
// busyWait.
//
// It first opens dev exclusively, which fails while a file system is
// mounted on it. Without that check LOOP_CLR_FD on a mounted device
// succeeds and only marks it to clear on its last close, so the device
// would vanish when Docker unmounts the volume and could not be mounted
// again.
func detachLoop(b binding) error {
	dev := b.device
	var fd int
	err := retryBusy(func() error {
		var err error
		fd, err = openDevice(dev, unix.O_RDWR|unix.O_EXCL)
		return err
	})
	if errors.Is(err, unix.EBUSY) {
		return fmt.Errorf("detach %s: still mounted or held exclusively after %v: %w", dev, busyWait, ErrBusy)
	}
	if errors.Is(err, unix.ENXIO) || errors.Is(err, os.ErrNotExist) {
		return nil // the device went away
	}
	if err != nil {
		return err
	}
	err = retryBusy(func() error { return unix.IoctlSetInt(fd, unix.LOOP_CLR_FD, 0) })
	unix.Close(fd) // the kernel detaches on this last close
	switch {
	case errors.Is(err, unix.ENXIO):
		return nil // not attached
	case errors.Is(err, unix.EBUSY):
		return fmt.Errorf("detach %s: still in use after %v: %w", dev, busyWait, ErrBusy)
	case err != nil:
		return fmt.Errorf("detach %s: %w", dev, err)
	}
	detached := func() bool { return strings.TrimSuffix(backingFile(dev), deletedSuffix) != b.backing }
	if !waitFor(busyWait, detached) {
		return fmt.Errorf("detach %s: another process still has it open; it detaches when that process closes it: %w", dev, ErrBusy)
	}
	return nil
}

// openDevice opens the loop device dev. If its node is missing, as in a
// container whose /dev is not the host's, it creates the node from the
// device number in sysfs first.
func openDevice(dev string, flags int) (int, error) {
	fd, err := unix.Open(dev, flags|unix.O_CLOEXEC, 0)
	if !errors.Is(err, unix.ENOENT) {
		if err != nil {
			return -1, fmt.Errorf("open %s: %w", dev, err)
		}
		return fd, nil
	}
	if err := makeNode(dev); err != nil {
		return -1, err
	}
	fd, err = unix.Open(dev, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", dev, err)
	}
	return fd, nil
}

// makeNode creates the block device node dev (/dev/loopN) with the major
// and minor numbers sysfs gives for it.
func makeNode(dev string) error {
	name := filepath.Base(dev)
	raw, err := os.ReadFile(filepath.Join(sysBlock, name, "dev"))
	if err != nil {
		return fmt.Errorf("create node %s: %w", dev, err)
	}
	var major, minor uint32
	if _, err := fmt.Sscanf(strings.TrimSpace(string(raw)), "%d:%d", &major, &minor); err != nil || major != loopMajor {
		return fmt.Errorf("create node %s: unexpected device number %q in sysfs", dev, raw)
	}
	err = unix.Mknod(dev, unix.S_IFBLK|0o660, int(unix.Mkdev(major, minor)))
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("create node %s: %w", dev, err)
	}
	return nil
}

// retryBusy calls f until it returns something other than an EBUSY error
// or busyWait has passed, and returns f's last error.
func retryBusy(f func() error) error {
	var err error
	waitFor(busyWait, func() bool {
		err = f()
		return !errors.Is(err, unix.EBUSY)
	})
	return err
}

// waitFor calls cond, with pauses growing from 10ms to 200ms, until it
// returns true or d has passed. It reports cond's last result.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	pause := 10 * time.Millisecond
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 200*time.Millisecond)
	}
}
