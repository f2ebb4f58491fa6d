package disks

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

const (
	testSize int64 = 64 << 20
	testUID        = 10001
	testGID        = 10001
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
	require.NoError(t, err, "Attach(%q)", name)
	t.Cleanup(func() {
		assert.NoError(t, p.Detach(name), "cleanup: Detach(%q)", name)
		assert.NotEqual(t, d.Image, strings.TrimSuffix(backingFile(d.Device), deletedSuffix), "cleanup: %s still backed by its image", d.Device)
	})
	return d
}

// mount mounts dev on a new temporary directory, unmounted when the test
// ends unless unmount was called, and returns the directory.
func mount(t *testing.T, dev string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, unix.Mount(dev, dir, "ext4", 0, ""), "mount %s on %s", dev, dir)
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); !errors.Is(err, unix.EINVAL) { // EINVAL: the test unmounted it
			assert.NoError(t, err, "cleanup: unmount %s", dir)
		}
	})
	return dir
}

// unmount unmounts dir.
func unmount(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, unix.Unmount(dir, 0), "unmount %s", dir)
}
