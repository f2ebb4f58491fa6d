package disks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// binding is a loop device and the file attached to it, as sysfs shows them.
type binding struct {
	device  string // "/dev/loop3"
	backing string // absolute path of the file
	deleted bool   // the file has been unlinked since it was attached
}

// deletedSuffix is what the kernel appends to the path of an unlinked
// backing file.
const deletedSuffix = " (deleted)"

// loopBindings lists every attached loop device by reading
// /sys/block/loop*/loop/backing_file.
func loopBindings() ([]binding, error) {
	files, err := filepath.Glob(filepath.Join(sysBlock, "loop*", "loop", "backing_file"))
	if err != nil {
		return nil, fmt.Errorf("list loop devices: %w", err)
	}
	var bs []binding
	for _, f := range files {
		dev := "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(f)))
		raw, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue // detached since the glob
		}
		if err != nil {
			return nil, fmt.Errorf("read backing file of %s: %w", dev, err)
		}
		b := binding{device: dev, backing: strings.TrimSuffix(string(raw), "\n")}
		if s, ok := strings.CutSuffix(b.backing, deletedSuffix); ok {
			b.backing, b.deleted = s, true
		}
		bs = append(bs, b)
	}
	return bs, nil
}

// backingFile returns the path sysfs gives as dev's backing file, with any
// " (deleted)" kept, or "" when dev is not attached.
func backingFile(dev string) string {
	raw, err := os.ReadFile(filepath.Join(sysBlock, filepath.Base(dev), "loop", "backing_file"))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(raw), "\n")
}
