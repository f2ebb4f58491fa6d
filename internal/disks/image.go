package disks

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// newSuffix marks an image that is still being made. It is renamed to
// its final name only once formatted, so a crash never leaves an
// unformatted <name>.img behind.
const newSuffix = ".new"

// makeImage creates image as a sparse file of size bytes in dir and formats
// it ext4 with its root directory owned by uid:gid. It returns an ErrNoSpace
// error when size exceeds the free space of dir's file system. ctx bounds
// mkfs.ext4.
func makeImage(ctx context.Context, dir, image string, size int64, uid, gid int) error {
	st, err := statfs(dir)
	if err != nil {
		return err
	}
	if free := int64(st.Bavail) * st.Bsize; size > free {
		return fmt.Errorf("disk image %s of %d bytes does not fit in the %d bytes free in %s: %w", image, size, free, dir, ErrNoSpace)
	}
	tmp := image + newSuffix
	if err := makeSparse(tmp, size); err != nil {
		return err
	}
	if err := format(ctx, tmp, size, uid, gid); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, image); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("make disk image: %w", err)
	}
	return syncDir(dir)
}

// makeSparse creates (or truncates) the file path and sets its size to size
// bytes without allocating any blocks.
func makeSparse(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("create disk image: %w", err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("size disk image %s: %w", path, err)
	}
	return nil
}

// format runs mkfs.ext4 on the image file path of size bytes.
//
// -m 0 reserves no blocks for root, so the sandbox gets the whole size.
// root_owner makes the sandbox's user own the file system's root, which
// becomes /workspace. 4 KiB blocks and one inode per 16 KiB keep the file
// system's own overhead small (a 32 MiB disk holds 30 MiB of files) while
// leaving room for trees of many small files (2,048 inodes per 32 MiB).
// A journal costs at least 4 MiB, so only disks of journalFrom or more get
// one (see the package doc).
// lazy_itable_init and lazy_journal_init skip zeroing the inode tables and
// the journal: the image is a new sparse file, which reads as zeros, so
// zeroing would only cost time and host disk.
func format(ctx context.Context, path string, size int64, uid, gid int) error {
	ext := fmt.Sprintf("root_owner=%d:%d,lazy_itable_init=1,lazy_journal_init=1", uid, gid)
	args := []string{"-q", "-F", "-m", "0", "-b", "4096", "-i", "16384", "-E", ext}
	if size < journalFrom {
		args = append(args, "-O", "^has_journal")
	}
	if err := run(ctx, "mkfs.ext4", append(args, path)...); err != nil {
		return fmt.Errorf("format %s: %w", path, err)
	}
	// The sandbox's workspace should hold only its own files: remove the
	// root-owned lost+found that mkfs makes (e2fsck makes it again if it
	// ever needs it).
	if err := run(ctx, "debugfs", "-w", "-R", "rmdir lost+found", path); err != nil {
		return fmt.Errorf("format %s: %w", path, err)
	}
	return nil
}

// run runs a command and returns an error with its output when it fails.
func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	}
	if err != nil {
		return fmt.Errorf("%s said %q: %w", name, strings.TrimSpace(string(out)), err)
	}
	return nil
}

// journalFrom is the smallest disk that gets a journal: below it the
// journal's minimum of 4 MiB would take more than 1.6% of the disk.
const journalFrom = 256 << 20

// syncDir flushes dir so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
