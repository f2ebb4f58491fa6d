package disks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sandox/sandox/internal/poll"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestAttachMakesDevice(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	d := attach(t, p, "sbx-1")

	assert.Equal(t, filepath.Join(p.Dir, "sbx-1.img"), d.Image, "image")
	assert.True(t, strings.HasPrefix(d.Device, "/dev/loop"), "device %q, want /dev/loopN", d.Device)
	assert.Equal(t, "sbx-1", d.Name, "name")
	assert.Equal(t, testSize, d.SizeBytes, "size")
	assert.Equal(t, d.Image, backingFile(d.Device), "backing_file of %s", d.Device)
	fd, err := unix.Open(d.Device, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	info, err := unix.IoctlLoopGetStatus64(fd)
	unix.Close(fd)
	require.NoError(t, err)
	assert.Zero(t, info.Flags&unix.LO_FLAGS_AUTOCLEAR, "flags: got %#x, want no LO_FLAGS_AUTOCLEAR", info.Flags)
	assert.Equal(t, d.Image, unix.ByteSliceToString(info.File_name[:]), "lo_file_name")

	again, err := p.Attach(t.Context(), "sbx-1", testSize, testUID, testGID)
	require.NoError(t, err, "second Attach")
	assert.Equal(t, d, again, "second Attach")
	found, ok, err := p.Find("sbx-1")
	require.NoError(t, err, "Find")
	assert.True(t, ok, "Find")
	assert.Equal(t, d, found, "Find")
}

func TestAttachConcurrent(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	names := []string{"a", "a", "a", "b", "c"}
	disks := make([]Disk, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { disks[i], errs[i] = p.Attach(t.Context(), name, testSize, testUID, testGID) })
	}
	wg.Wait()
	for _, name := range []string{"a", "b", "c"} {
		t.Cleanup(func() {
			assert.NoError(t, p.Detach(name), "cleanup: Detach(%q)", name)
		})
	}
	require.NoError(t, errors.Join(errs...))
	assert.Equal(t, disks[0], disks[1], "same name, want one device")
	assert.Equal(t, disks[0], disks[2], "same name, want one device")
	assert.NotEqual(t, disks[0].Device, disks[3].Device, "different names share a device")
	assert.NotEqual(t, disks[3].Device, disks[4].Device, "different names share a device")
	assert.NotEqual(t, disks[0].Device, disks[4].Device, "different names share a device")
}

func TestWriteUntilFull(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	d := attach(t, p, "full")
	dir := mount(t, d.Device)

	var st unix.Stat_t
	require.NoError(t, unix.Stat(dir, &st))
	assert.Equal(t, uint32(testUID), st.Uid, "root owner uid")
	assert.Equal(t, uint32(testGID), st.Gid, "root owner gid")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "entries in a new disk, want none (no lost+found)")

	written, err := fill(filepath.Join(dir, "big"))
	assert.ErrorIs(t, err, syscall.ENOSPC, "filling the disk")
	minWant := testSize * 80 / 100
	assert.LessOrEqual(t, written, testSize, "bytes written before ENOSPC")
	assert.GreaterOrEqual(t, written, minWant, "bytes written before ENOSPC")
	t.Logf("wrote %d of %d bytes (%.1f%%) before ENOSPC", written, testSize, 100*float64(written)/float64(testSize))
	unmount(t, dir)
}

// fill writes 1 MiB chunks to a new file at path until a write fails, and
// returns the bytes written and the error.
func fill(path string) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i) // not zeros, in case anything skips them
	}
	var total int64
	for total <= 2*testSize {
		n, err := f.Write(chunk)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, f.Sync()
}

func TestDetach(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	d, err := p.Attach(t.Context(), "gone", testSize, testUID, testGID)
	require.NoError(t, err)
	require.NoError(t, p.Detach("gone"), "Detach")
	assert.NotEqual(t, d.Image, backingFile(d.Device), "after Detach %s is still backed by its image", d.Device)
	assert.NoFileExists(t, d.Image, "after Detach")
	_, ok, err := p.Find("gone")
	assert.NoError(t, err, "after Detach Find")
	assert.False(t, ok, "after Detach Find")
	assert.NoError(t, p.Detach("gone"), "second Detach")
	assert.NoError(t, p.Detach("never-made"), "Detach of a name never attached")
	missing := &Pool{Dir: filepath.Join(t.TempDir(), "missing")}
	assert.NoError(t, missing.Detach("x"), "Detach in a missing Dir")
}

func TestDetachWhileMounted(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	d := attach(t, p, "mounted")
	dir := mount(t, d.Device)

	err := p.Detach("mounted")
	require.ErrorIs(t, err, ErrBusy, "Detach while mounted")
	require.ErrorContains(t, err, "busy", "Detach while mounted")
	assert.Equal(t, d.Image, backingFile(d.Device), "after busy Detach backing_file")
	// The failed Detach must not leave the device set to clear itself:
	// Docker unmounts and mounts the volume again on a restart.
	unmount(t, dir)
	dir = mount(t, d.Device)
	unmount(t, dir)

	require.NoError(t, p.Detach("mounted"), "Detach after unmount")
	assert.NotEqual(t, d.Image, backingFile(d.Device), "after Detach %s is still backed by its image", d.Device)
}

func TestReattachKeepsFiles(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	d := attach(t, p, "keep")
	dir := mount(t, d.Device)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "note"), []byte("hello"), 0o644))
	unmount(t, dir)

	clearLoop(t, d.Device)
	poll.Until(t, 2*time.Second, d.Device+" to be detached", func() bool { return backingFile(d.Device) == "" })
	_, ok, err := p.Find("keep")
	require.NoError(t, err, "Find of a detached image")
	require.False(t, ok, "Find of a detached image")

	again, err := p.Attach(t.Context(), "keep", testSize, testUID, testGID)
	require.NoError(t, err, "Attach again")
	dir = mount(t, again.Device)
	got, err := os.ReadFile(filepath.Join(dir, "note"))
	require.NoError(t, err, "after re-Attach read note")
	assert.Equal(t, "hello", string(got), "after re-Attach read note")
	unmount(t, dir)
}

// clearLoop detaches dev directly, as a reboot or `losetup -d` would.
func clearLoop(t *testing.T, dev string) {
	t.Helper()
	fd, err := unix.Open(dev, unix.O_RDWR|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.NoError(t, unix.IoctlSetInt(fd, unix.LOOP_CLR_FD, 0), "LOOP_CLR_FD %s", dev)
}

func TestAttachRejects(t *testing.T) {
	huge := int64(1) << 60
	tests := []struct {
		name     string
		disk     string
		size     int64
		uid      int
		wantErr  error
		wantText string
	}{
		{name: "empty name", disk: "", size: testSize, wantErr: ErrInvalid, wantText: "1 to 63 characters"},
		{name: "long name", disk: strings.Repeat("a", 64), size: testSize, wantErr: ErrInvalid, wantText: "1 to 63 characters"},
		{name: "slash", disk: "a/b", size: testSize, wantErr: ErrInvalid, wantText: "'/'"},
		{name: "dot dot", disk: "..", size: testSize, wantErr: ErrInvalid, wantText: "'.'"},
		{name: "space", disk: "a b", size: testSize, wantErr: ErrInvalid, wantText: "' '"},
		{name: "too small", disk: "ok", size: 1 << 20, wantErr: ErrInvalid, wantText: "16 MiB"},
		{name: "negative size", disk: "ok", size: -1, wantErr: ErrInvalid, wantText: "16 MiB"},
		{name: "negative uid", disk: "ok", size: testSize, uid: -1, wantErr: ErrInvalid, wantText: "must not be negative"},
		{name: "too big", disk: "ok", size: huge, wantErr: ErrNoSpace, wantText: strconv.FormatInt(huge, 10) + " bytes does not fit in the "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t)
			_, err := p.Attach(t.Context(), tt.disk, tt.size, tt.uid, testGID)
			require.ErrorIs(t, err, tt.wantErr)
			require.ErrorContains(t, err, tt.wantText)
			left, _ := os.ReadDir(p.Dir)
			assert.Empty(t, left, "files left behind")
		})
	}
}

func TestAttachCancelled(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := p.Attach(ctx, "cancelled", testSize, testUID, testGID)
	assert.ErrorIs(t, err, context.Canceled, "Attach with a cancelled context")
	left, _ := os.ReadDir(p.Dir)
	assert.Empty(t, left, "files left behind")
}

func TestList(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	a := attach(t, p, "a")
	b := attach(t, p, "b")
	clearLoop(t, b.Device)
	poll.Until(t, 2*time.Second, b.Device+" to be detached", func() bool { return backingFile(b.Device) == "" })
	b.Device = ""
	for _, stray := range []string{"notes.txt", "bad name.img"} {
		require.NoError(t, os.WriteFile(filepath.Join(p.Dir, stray), nil, 0o600))
	}

	got, err := p.List()
	require.NoError(t, err)
	assert.Equal(t, []Disk{a, b}, got, "List")

	missing := &Pool{Dir: filepath.Join(t.TempDir(), "missing")}
	got, err = missing.List()
	assert.NoError(t, err, "List of a missing Dir")
	assert.Empty(t, got, "List of a missing Dir")

	// DetachAll removes both, attached or not, and leaves the strays.
	require.NoError(t, p.DetachAll())
	got, err = p.List()
	assert.NoError(t, err, "List after DetachAll")
	assert.Empty(t, got, "List after DetachAll")
	assert.Empty(t, backingFile(a.Device), "%s still attached after DetachAll", a.Device)
	assert.NoError(t, missing.DetachAll(), "DetachAll of a missing Dir")
}

func TestCapacity(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "not", "yet")} {
		p := &Pool{Dir: dir}
		got, err := p.Capacity()
		assert.NoError(t, err, "Capacity of %s", dir)
		assert.Positive(t, got, "Capacity of %s", dir)
	}
}

func TestCheck(t *testing.T) {
	requireLoop(t)
	assert.NoError(t, newPool(t).Check())

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	p := &Pool{Dir: filepath.Join(file, "disks")}
	err := p.Check()
	assert.ErrorIs(t, err, ErrUnsupported, "Check with Dir under a file")
	assert.ErrorContains(t, err, "not a directory", "Check with Dir under a file")
}
