package disks

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// capSysAdmin is the bit of CAP_SYS_ADMIN in a capability set.
const capSysAdmin = 21

// Capacity returns the size in bytes of the file system holding Dir
// (Blocks*Bsize from statfs), against which relative disk amounts such as
// "10%" resolve. When Dir does not exist yet it measures the file system
// of its nearest existing parent.
func (p *Pool) Capacity() (int64, error) {
	if p.Dir == "" {
		return 0, fmt.Errorf("disk pool: Dir is empty: %w", ErrInvalid)
	}
	st, err := statfs(p.Dir)
	if err != nil {
		return 0, err
	}
	return int64(st.Blocks) * st.Bsize, nil
}

// Check reports why disk limits cannot work on this host, or nil when they
// can. The error, which wraps ErrUnsupported, names every reason found:
// neither root nor CAP_SYS_ADMIN, no usable /dev/loop-control, no mkfs.ext4
// on PATH, Dir not creatable or not writable. Call it at startup and refuse
// requests for disk limits with its error.
//
// Check creates Dir if it is missing.
func (p *Pool) Check() error {
	var reasons []string
	if !privileged() {
		reasons = append(reasons, "not root and no CAP_SYS_ADMIN, which attaching loop devices needs")
	}
	if fd, err := unix.Open(loopControl, unix.O_RDWR|unix.O_CLOEXEC, 0); err != nil {
		reasons = append(reasons, fmt.Sprintf("cannot open %s (loop driver missing, or in a container without the host's /dev): %v", loopControl, err))
	} else {
		unix.Close(fd)
	}
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		reasons = append(reasons, "no mkfs.ext4 on PATH (install e2fsprogs)")
	}
	if _, err := exec.LookPath("debugfs"); err != nil {
		reasons = append(reasons, "no debugfs on PATH (install e2fsprogs)")
	}
	if err := p.checkDir(); err != nil {
		reasons = append(reasons, err.Error())
	}
	if len(reasons) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(reasons, "; "), ErrUnsupported)
	}
	return nil
}

// checkDir creates Dir and writes a file in it.
func (p *Pool) checkDir() error {
	dir, err := p.makeDir()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".check-*")
	if err != nil {
		return fmt.Errorf("disk pool %s not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// privileged reports whether the process is root or has CAP_SYS_ADMIN in
// its effective set.
func privileged() bool {
	if os.Geteuid() == 0 {
		return true
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		hex, ok := strings.CutPrefix(s.Text(), "CapEff:")
		if !ok {
			continue
		}
		caps, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		return err == nil && caps&(1<<capSysAdmin) != 0
	}
	return false
}

// statfs returns the statistics of the file system holding path, or of its
// nearest existing parent when path does not exist.
func statfs(path string) (unix.Statfs_t, error) {
	var st unix.Statfs_t
	p, err := filepath.Abs(path)
	if err != nil {
		return st, fmt.Errorf("statfs %s: %w", path, err)
	}
	for {
		err := unix.Statfs(p, &st)
		if err == nil {
			return st, nil
		}
		parent := filepath.Dir(p)
		if !errors.Is(err, fs.ErrNotExist) || parent == p {
			return st, fmt.Errorf("statfs %s: %w", p, err)
		}
		p = parent
	}
}
