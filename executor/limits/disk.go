package limits

import (
	"fmt"
	"syscall"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
)

// fullMargin is the most free space a disk may have left and still count as
// full: below it a write is likely to fail with "no space left on device"
// (ext4 refuses a large write well before its last free block is used, as
// it reserves room for the write's own metadata).
const fullMargin = 1 << 20

// diskState remembers whether the workspace was full at the last check, so
// that a full disk is reported when it fills up, not at every check.
type diskState struct {
	full bool
}

// check reports the workspace's disk when it became full since the last
// check. A statfs error is taken as "nothing seen this time".
func (d *diskState) check(statfs func(string, *syscall.Statfs_t) error, path string, limit int64) (schemas.LimitHit, bool) {
	var st syscall.Statfs_t
	if err := statfs(path, &st); err != nil {
		return schemas.LimitHit{}, false
	}
	bsize := int64(st.Bsize)
	total, avail := int64(st.Blocks)*bsize, int64(st.Bavail)*bsize
	full := avail < fullThreshold(total, bsize)
	became := full && !d.full
	d.full = full
	if !became {
		return schemas.LimitHit{}, false
	}
	return schemas.LimitHit{Resource: schemas.LimitDisk, Count: 1, Message: diskMessage(path, limit, avail)}, true
}

// fullThreshold is the free space below which a file system of total bytes
// counts as full: fullMargin, or a tenth of a small one, at least one block.
func fullThreshold(total, bsize int64) int64 {
	return max(min(total/10, fullMargin), bsize)
}

// diskMessage counts as used everything the sandbox can no longer write,
// the file system's own metadata included, so that a full disk reads
// "64.0 MiB of 64.0 MiB used" for a 64 MiB limit.
func diskMessage(path string, limit, avail int64) string {
	used := max(limit-avail, 0)
	return fmt.Sprintf("%s is full: %s of %s used", path, resources.FormatBytes(used), resources.FormatBytes(limit))
}

// Usage returns the bytes the workspace holds. With a disk limit it asks the
// workspace's own file system (statfs: its used blocks, without the space
// the file system keeps for itself), which is immediate. Without one it
// walks the workspace and adds up the blocks of its regular files, counting
// a file with several hard links once; a walk that runs past 1,000,000
// entries or 2 seconds, or meets a directory it cannot read, stops or skips
// and returns the bytes counted so far with an error wrapping ErrPartial:
// the figure is then a lower bound. Other errors (no workspace) come with
// 0. Usage blocks for the walk and is safe for concurrent use.
func (w *Watcher) Usage() (usedBytes int64, err error) {
	if w.diskLimit == 0 {
		return walkUsage(w.workspace, w.walkMax, w.walkUntil)
	}
	var st syscall.Statfs_t
	if err := w.statfs(w.workspace, &st); err != nil {
		return 0, fmt.Errorf("disk use of %s: %w", w.workspace, err)
	}
	return int64(st.Blocks-st.Bfree) * int64(st.Bsize), nil
}
