package limits

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sandox/sandox/schemas"
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
			if got := fullThreshold(tt.total, tt.bsize); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
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
	if err != nil {
		t.Fatal(err)
	}
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
		if len(got) != len(s.want) || (len(got) == 1 && got[0] != s.want[0]) {
			t.Fatalf("step %d (%d bytes free): got %+v, want %+v", i, s.avail, got, s.want)
		}
	}
}

func TestUsageStatfs(t *testing.T) {
	w, err := New(Config{CgroupRoot: t.TempDir(), Workspace: "/workspace", DiskLimitBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	avail := int64(60 << 20)
	w.statfs = fakeStatfs(&avail)
	if got, err := w.Usage(); err != nil || got != 4<<20 {
		t.Fatalf("got %d, %v, want %d", got, err, 4<<20)
	}
	w.statfs = func(string, *syscall.Statfs_t) error { return syscall.ENOENT }
	if _, err := w.Usage(); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("got %v, want ENOENT", err)
	}
}

func TestUsageWalk(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "a"), strings.Repeat("a", 100<<10))
	writeFile(t, filepath.Join(ws, "sub", "deeper", "b"), strings.Repeat("b", 50<<10))
	if err := os.Link(filepath.Join(ws, "a"), filepath.Join(ws, "sub", "a-again")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "a"), filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	sparse, err := os.Create(filepath.Join(ws, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	sparse.Close()

	w, err := New(Config{CgroupRoot: t.TempDir(), Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	got, err := w.Usage()
	if err != nil {
		t.Fatal(err)
	}
	// The file system rounds to its blocks: allow a few per file, but not
	// a second copy of a, nor the sparse file's gigabyte.
	if want := int64(150 << 10); got < want || got > want+64<<10 {
		t.Fatalf("got %d bytes, want about %d (a counted once, the sparse file's hole not at all)", got, want)
	}

	w.walkMax = 3
	partial, err := w.Usage()
	if !errors.Is(err, ErrPartial) || partial > got {
		t.Fatalf("got %d, %v, want at most %d and ErrPartial", partial, err, got)
	}

	w.workspace = filepath.Join(ws, "missing")
	if _, err := w.Usage(); err == nil || errors.Is(err, ErrPartial) {
		t.Fatalf("got %v, want an error for a missing workspace", err)
	}
}

// TestDiskFullExt4 fills a real 20 MiB ext4 file system, as the workspace of
// a sandbox with a disk limit is one. It needs root and a loop device.
func TestDiskFullExt4(t *testing.T) {
	mnt := mountExt4(t, 20<<20)
	w, err := New(Config{CgroupRoot: t.TempDir(), Workspace: mnt, DiskLimitBytes: 20 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Check(); got != nil {
		t.Fatalf("got %v on an empty disk, want no hits", got)
	}
	empty, err := w.Usage()
	if err != nil {
		t.Fatal(err)
	}

	f, err := os.Create(filepath.Join(mnt, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for err == nil {
		_, err = f.Write(chunk)
		if err == nil {
			err = f.Sync()
		}
	}
	f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("got %v filling the disk, want ENOSPC", err)
	}

	got := w.Check()
	if len(got) != 1 || got[0].Resource != schemas.LimitDisk || got[0].Message != mnt+" is full: 20.0 MiB of 20.0 MiB used" {
		t.Fatalf("got %+v, want %s reported full", got, mnt)
	}
	if used, err := w.Usage(); err != nil || used < empty+15<<20 {
		t.Fatalf("got %d bytes used, %v, want at least 15 MiB more than the empty %d", used, err, empty)
	}
	if err := os.Remove(filepath.Join(mnt, "fill")); err != nil {
		t.Fatal(err)
	}
	if got := w.Check(); got != nil {
		t.Fatalf("got %v after freeing the disk, want no hits", got)
	}
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
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-m", "0", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a loop device: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount: %v: %s", err, out)
		}
	})
	return mnt
}
