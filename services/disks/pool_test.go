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

	"golang.org/x/sys/unix"
)

func TestAttachMakesDevice(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	d := attach(t, p, "sbx-1")

	if want := filepath.Join(p.Dir, "sbx-1.img"); d.Image != want {
		t.Errorf("Image: got %q, want %q", d.Image, want)
	}
	if !strings.HasPrefix(d.Device, "/dev/loop") {
		t.Errorf("Device: got %q, want /dev/loopN", d.Device)
	}
	if d.Name != "sbx-1" || d.SizeBytes != testSize {
		t.Errorf("got name %q size %d, want sbx-1 %d", d.Name, d.SizeBytes, testSize)
	}
	if got := backingFile(d.Device); got != d.Image {
		t.Errorf("backing_file of %s: got %q, want %q", d.Device, got, d.Image)
	}
	fd, err := unix.Open(d.Device, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	info, err := unix.IoctlLoopGetStatus64(fd)
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	if info.Flags&unix.LO_FLAGS_AUTOCLEAR != 0 {
		t.Errorf("flags: got %#x, want no LO_FLAGS_AUTOCLEAR", info.Flags)
	}
	if got := unix.ByteSliceToString(info.File_name[:]); got != d.Image {
		t.Errorf("lo_file_name: got %q, want %q", got, d.Image)
	}

	again, err := p.Attach(t.Context(), "sbx-1", testSize, testUID, testGID)
	if err != nil {
		t.Fatalf("second Attach: %v", err)
	}
	if again != d {
		t.Errorf("second Attach: got %+v, want %+v", again, d)
	}
	found, ok, err := p.Find("sbx-1")
	if err != nil || !ok || found != d {
		t.Errorf("Find: got %+v, %v, %v, want %+v, true, nil", found, ok, err, d)
	}
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
			if err := p.Detach(name); err != nil {
				t.Errorf("cleanup: Detach(%q): %v", name, err)
			}
		})
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if disks[0] != disks[1] || disks[0] != disks[2] {
		t.Errorf("same name attached as %v, %v, %v, want one device", disks[0].Device, disks[1].Device, disks[2].Device)
	}
	if disks[0].Device == disks[3].Device || disks[3].Device == disks[4].Device || disks[0].Device == disks[4].Device {
		t.Errorf("different names share a device: %v, %v, %v", disks[0].Device, disks[3].Device, disks[4].Device)
	}
}

func TestWriteUntilFull(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	d := attach(t, p, "full")
	dir := mount(t, d.Device)

	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != testUID || st.Gid != testGID {
		t.Errorf("root owner: got %d:%d, want %d:%d", st.Uid, st.Gid, testUID, testGID)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("got entries %v (err %v) in a new disk, want none (no lost+found)", entries, err)
	}

	written, err := fill(filepath.Join(dir, "big"))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("filling the disk: got error %v, want ENOSPC", err)
	}
	if minWant := int64(testSize) * 80 / 100; written > testSize || written < minWant {
		t.Errorf("wrote %d bytes before ENOSPC, want between %d and %d", written, minWant, testSize)
	}
	t.Logf("wrote %d of %d bytes (%.1f%%) before ENOSPC", written, testSize, 100*float64(written)/testSize)
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
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Detach("gone"); err != nil {
		t.Fatalf("Detach: %v", err)
	}
	if got := backingFile(d.Device); got == d.Image {
		t.Errorf("after Detach %s is still backed by %s", d.Device, got)
	}
	if _, err := os.Stat(d.Image); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Detach stat image: got %v, want not exist", err)
	}
	if _, ok, err := p.Find("gone"); ok || err != nil {
		t.Errorf("after Detach Find: got %v, %v, want false, nil", ok, err)
	}
	if err := p.Detach("gone"); err != nil {
		t.Errorf("second Detach: got %v, want nil", err)
	}
	if err := p.Detach("never-made"); err != nil {
		t.Errorf("Detach of a name never attached: got %v, want nil", err)
	}
	missing := &Pool{Dir: filepath.Join(t.TempDir(), "missing")}
	if err := missing.Detach("x"); err != nil {
		t.Errorf("Detach in a missing Dir: got %v, want nil", err)
	}
}

func TestDetachWhileMounted(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	d := attach(t, p, "mounted")
	dir := mount(t, d.Device)

	err := p.Detach("mounted")
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("Detach while mounted: got %v, want an ErrBusy error", err)
	}
	if got := backingFile(d.Device); got != d.Image {
		t.Errorf("after busy Detach backing_file: got %q, want %q", got, d.Image)
	}
	// The failed Detach must not leave the device set to clear itself:
	// Docker unmounts and mounts the volume again on a restart.
	unmount(t, dir)
	dir = mount(t, d.Device)
	unmount(t, dir)

	if err := p.Detach("mounted"); err != nil {
		t.Fatalf("Detach after unmount: %v", err)
	}
	if got := backingFile(d.Device); got == d.Image {
		t.Errorf("after Detach %s is still backed by %s", d.Device, got)
	}
}

func TestReattachKeepsFiles(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	d := attach(t, p, "keep")
	dir := mount(t, d.Device)
	if err := os.WriteFile(filepath.Join(dir, "note"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	unmount(t, dir)

	clearLoop(t, d.Device)
	checkFor(t, 2*time.Second, d.Device+" still attached", func() bool { return backingFile(d.Device) == "" })
	if _, ok, err := p.Find("keep"); ok || err != nil {
		t.Fatalf("Find of a detached image: got %v, %v, want false, nil", ok, err)
	}

	again, err := p.Attach(t.Context(), "keep", testSize, testUID, testGID)
	if err != nil {
		t.Fatalf("Attach again: %v", err)
	}
	dir = mount(t, again.Device)
	got, err := os.ReadFile(filepath.Join(dir, "note"))
	if err != nil || string(got) != "hello" {
		t.Errorf("after re-Attach read note: got %q, %v, want \"hello\"", got, err)
	}
	unmount(t, dir)
}

// clearLoop detaches dev directly, as a reboot or `losetup -d` would.
func clearLoop(t *testing.T, dev string) {
	t.Helper()
	fd, err := unix.Open(dev, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.IoctlSetInt(fd, unix.LOOP_CLR_FD, 0); err != nil {
		t.Fatalf("LOOP_CLR_FD %s: %v", dev, err)
	}
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
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("got %v, want %v containing %q", err, tt.wantErr, tt.wantText)
			}
			if left, _ := os.ReadDir(p.Dir); len(left) != 0 {
				t.Errorf("left files behind: %v", left)
			}
		})
	}
}

func TestAttachCancelled(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := p.Attach(ctx, "cancelled", testSize, testUID, testGID); !errors.Is(err, context.Canceled) {
		t.Errorf("Attach with a cancelled context: got %v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(p.Dir); len(left) != 0 {
		t.Errorf("left files behind: %v", left)
	}
}

func TestList(t *testing.T) {
	requireLoop(t)
	p := newPool(t)
	a := attach(t, p, "a")
	b := attach(t, p, "b")
	clearLoop(t, b.Device)
	checkFor(t, 2*time.Second, b.Device+" still attached", func() bool { return backingFile(b.Device) == "" })
	b.Device = ""
	for _, stray := range []string{"notes.txt", "bad name.img"} {
		if err := os.WriteFile(filepath.Join(p.Dir, stray), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	got, err := p.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("List: got %+v, want [%+v %+v]", got, a, b)
	}

	missing := &Pool{Dir: filepath.Join(t.TempDir(), "missing")}
	if got, err := missing.List(); len(got) != 0 || err != nil {
		t.Errorf("List of a missing Dir: got %v, %v, want none, nil", got, err)
	}

	// DetachAll removes both, attached or not, and leaves the strays.
	if err := p.DetachAll(); err != nil {
		t.Fatal(err)
	}
	if got, err := p.List(); len(got) != 0 || err != nil {
		t.Errorf("List after DetachAll: got %v, %v, want none, nil", got, err)
	}
	if backingFile(a.Device) != "" {
		t.Errorf("%s still attached after DetachAll", a.Device)
	}
	if err := missing.DetachAll(); err != nil {
		t.Errorf("DetachAll of a missing Dir: got %v, want nil", err)
	}
}

func TestCapacity(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "not", "yet")} {
		p := &Pool{Dir: dir}
		got, err := p.Capacity()
		if err != nil || got <= 0 {
			t.Errorf("Capacity of %s: got %d, %v, want > 0, nil", dir, got, err)
		}
	}
}

func TestCheck(t *testing.T) {
	requireLoop(t)
	if err := newPool(t).Check(); err != nil {
		t.Errorf("Check: got %v, want nil", err)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := &Pool{Dir: filepath.Join(file, "disks")}
	if err := p.Check(); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Check with Dir under a file: got %v, want ErrUnsupported saying not a directory", err)
	}
}
