package disks

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const (
	testSize = 64 << 20
	testUID  = 10001
	testGID  = 10001
)

// requireLoop skips the test unless this process can attach loop devices.
func requireLoop(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: attaching loop devices needs root")
	}
	if _, err := os.Stat(loopControl); err != nil {
		t.Skipf("no loop driver: %v", err)
	}
}

// newPool returns a Pool in a fresh temporary directory.
func newPool(t *testing.T) *Pool {
	t.Helper()
	return &Pool{Dir: t.TempDir()}
}

// attach attaches a test disk of name and detaches it when the test ends,
// failing the test if that leaves the image attached.
func attach(t *testing.T, p *Pool, name string) Disk {
	t.Helper()
	d, err := p.Attach(t.Context(), name, testSize, testUID, testGID)
	if err != nil {
		t.Fatalf("Attach(%q): %v", name, err)
	}
	t.Cleanup(func() {
		if err := p.Detach(name); err != nil {
			t.Errorf("cleanup: Detach(%q): %v", name, err)
		}
		if got := backingFile(d.Device); strings.TrimSuffix(got, deletedSuffix) == d.Image {
			t.Errorf("cleanup: %s still backed by %s", d.Device, got)
		}
	})
	return d
}

// mount mounts dev on a new temporary directory, unmounted when the test
// ends unless unmount was called, and returns the directory.
func mount(t *testing.T, dev string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount(dev, dir, "ext4", 0, ""); err != nil {
		t.Fatalf("mount %s on %s: %v", dev, dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			t.Errorf("cleanup: unmount %s: %v", dir, err)
		}
	})
	return dir
}

// unmount unmounts dir.
func unmount(t *testing.T, dir string) {
	t.Helper()
	if err := unix.Unmount(dir, 0); err != nil {
		t.Fatalf("unmount %s: %v", dir, err)
	}
}

// checkFor fails the test unless cond becomes true within d.
func checkFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !waitFor(d, cond) {
		t.Fatalf("after %v: %s", d, what)
	}
}
