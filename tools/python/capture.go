package python

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// maxOutput bounds how much of a call's stdout, and of its stderr, comes
// back in the Result; the rest is cut and the cut is said.
const maxOutput = 1 << 20

// capture holds the two files a call's fds 1 and 2 point at. The executor
// owns them, not the host, so what a call wrote survives the host being
// killed or crashing. They are unlinked at once: nothing is left in the
// temp directory whatever happens.
type capture struct {
	stdout, stderr *os.File
	once           sync.Once
}

func newCapture() (*capture, error) {
	c := &capture{}
	var err error
	if c.stdout, err = unlinkedTemp("sandox-tool-stdout-*"); err != nil {
		return nil, err
	}
	if c.stderr, err = unlinkedTemp("sandox-tool-stderr-*"); err != nil {
		c.stdout.Close()
		return nil, err
	}
	return c, nil
}

func unlinkedTemp(pattern string) (*os.File, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// reset empties both files before a call. The host shares their file
// offsets, so it writes from the start again.
func (c *capture) reset() error {
	for _, f := range []*os.File{c.stdout, c.stderr} {
		if err := f.Truncate(0); err != nil {
			return err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
	return nil
}

// read returns what the last call wrote to stdout and stderr.
func (c *capture) read() (stdout, stderr string) {
	return readCapped(c.stdout), readCapped(c.stderr)
}

func readCapped(f *os.File) string {
	info, err := f.Stat()
	if err != nil {
		return ""
	}
	size := info.Size()
	buf := make([]byte, min(size, maxOutput))
	n, _ := f.ReadAt(buf, 0)
	out := string(buf[:n])
	if size > maxOutput {
		out += fmt.Sprintf("\n[output cut: %d of %d bytes shown]\n", n, size)
	}
	return out
}

// close closes both files. It is safe to call more than once.
func (c *capture) close() {
	c.once.Do(func() {
		c.stdout.Close()
		c.stderr.Close()
	})
}
