package limits

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFullThreshold(t *testing.T) {
	tests := []struct {
		name         string
		total, bsize int64
		want         int64
	}{
		{"tiny disk: one block", 32 << 10, 4096, 4096},
		{"small disk: a tenth", 8 << 20, 4096, 838860},
		{"16 MiB disk: 1 MiB", 16 << 20, 4096, 1 << 20},
		{"large disk: 1 MiB", 10 << 30, 4096, 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, fullThreshold(tt.total, tt.bsize))
		})
	}
}

// fakeStatfs reports a 64 MiB file system of 4 KiB blocks with *avail
// bytes free.
func fakeStatfs(avail *int64) func(string, *syscall.Statfs_t) error {
	return func(_ string, st *syscall.Statfs_t) error {
		st.Bsize = 4096
		st.Blocks = (64 << 20) / 4096
		st.Bavail = uint64(*avail / 4096)
		st.Bfree = st.Bavail
		return nil
	}
}

func TestCheckDiskFullOnce(t *testing.T) {
	w, err := New(Config{CgroupRoot: t.TempDir(), Workspace: "/workspace", DiskLimitBytes: 64 << 20})
	require.NoError(t, err)
	var avail int64
	w.statfs = fakeStatfs(&avail)
	full := schemas.LimitHit{Resource: schemas.LimitDisk, Count: 1, Message: "/workspace is full: 64.0 MiB of 64.0 MiB used"}
	steps := []struct {
		avail int64
		want  []schemas.LimitHit
	}{
		{32 << 20, nil},
		{0, []schemas.LimitHit{full}},
		{0, nil},        // still full: said already
		{4096, nil},     // a block freed is still full
		{10 << 20, nil}, // room again
		{0, []schemas.LimitHit{full}},
	}
	for i, s := range steps {
		avail = s.avail
		got := w.Check()
		require.Equal(t, s.want, got, "step %d (%d bytes free)", i, s.avail)
	}
}

func TestUsageStatfs(t *testing.T) {
	w, err := New(Config{CgroupRoot: t.TempDir(), Workspace: "/workspace", DiskLimitBytes: 64 << 20})
	require.NoError(t, err)
	avail := int64(60 << 20)
	w.statfs = fakeStatfs(&avail)
	got, err := w.Usage()
	require.NoError(t, err)
	require.Equal(t, int64(4<<20), got)
	w.statfs = func(string, *syscall.Statfs_t) error { return syscall.ENOENT }
	_, err = w.Usage()
	require.ErrorIs(t, err, syscall.ENOENT)
}

func TestUsageWalk(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "a"), strings.Repeat("a", 100<<10))
	writeFile(t, filepath.Join(ws, "sub", "deeper", "b"), strings.Repeat("b", 50<<10))
	require.NoError(t, os.Link(filepath.Join(ws, "a"), filepath.Join(ws, "sub", "a-again")))
	require.NoError(t, os.Symlink(filepath.Join(ws, "a"), filepath.Join(ws, "link")))
	sparse, err := os.Create(filepath.Join(ws, "sparse"))
	require.NoError(t, err)
	require.NoError(t, sparse.Truncate(1<<30))
	sparse.Close()

	w, err := New(Config{CgroupRoot: t.TempDir(), Workspace: ws})
	require.NoError(t, err)
	got, err := w.Usage()
	require.NoError(t, err)
	// The file system rounds to its blocks: allow a few per file, but not
	// a second copy of a, nor the sparse file's gigabyte.
	want := int64(150 << 10)
	require.GreaterOrEqual(t, got, want, "bytes: want a counted once, the sparse file's hole not at all")
	require.LessOrEqual(t, got, want+64<<10, "bytes: want a counted once, the sparse file's hole not at all")

	w.walkMax = 3
	partial, err := w.Usage()
	require.ErrorIs(t, err, ErrPartial)
	require.LessOrEqual(t, partial, got, "partial usage, want at most the full walk's")

	w.workspace = filepath.Join(ws, "missing")
	_, err = w.Usage()
	require.Error(t, err, "want an error for a missing workspace")
	require.NotErrorIs(t, err, ErrPartial)
}

// TestDiskFullExt4 fills a real 20 MiB ext4 file system, as the workspace of
// a sandbox with a disk limit is one. It needs root and a loop device.
func TestDiskFullExt4(t *testing.T) {
	mnt := mountExt4(t, 20<<20)
	w, err := New(Config{CgroupRoot: t.TempDir(), Workspace: mnt, DiskLimitBytes: 20 << 20})
	require.NoError(t, err)
	require.Nil(t, w.Check(), "on an empty disk, want no hits")
	empty, err := w.Usage()
	require.NoError(t, err)

	f, err := os.Create(filepath.Join(mnt, "fill"))
	require.NoError(t, err)
	chunk := make([]byte, 1<<20)
	for err == nil {
		_, err = f.Write(chunk)
		if err == nil {
			err = f.Sync()
		}
	}
	f.Close()
	require.ErrorIs(t, err, syscall.ENOSPC, "filling the disk, want ENOSPC")

	got := w.Check()
	require.Len(t, got, 1, "want %s reported full", mnt)
	require.Equal(t, schemas.LimitDisk, got[0].Resource, "%+v, want %s reported full", got, mnt)
	require.Equal(t, mnt+" is full: 20.0 MiB of 20.0 MiB used", got[0].Message, "%+v, want %s reported full", got, mnt)
	used, err := w.Usage()
	require.NoError(t, err)
	require.GreaterOrEqual(t, used, empty+15<<20, "bytes used: want at least 15 MiB more than the empty disk's")
	require.NoError(t, os.Remove(filepath.Join(mnt, "fill")))
	require.Nil(t, w.Check(), "after freeing the disk, want no hits")
}

// mountExt4 makes an ext4 file system of size bytes in a file and mounts it,
// or skips the test when it cannot (not root, no loop devices).
func mountExt4(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a loop device")
	}
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("no mkfs.ext4")
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "disk.img"), filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, os.WriteFile(img, nil, 0o600))
	require.NoError(t, os.Truncate(img, size))
	out, err := exec.Command("mkfs.ext4", "-q", "-F", "-m", "0", img).CombinedOutput()
	require.NoError(t, err, "mkfs.ext4: %s", out)
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a loop device: %v: %s", err, out)
	}
	t.Cleanup(func() {
		out, err := exec.Command("umount", mnt).CombinedOutput()
		assert.NoError(t, err, "umount: %s", out)
	})
	return mnt
}
