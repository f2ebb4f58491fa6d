package limits

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
)

// noLimit is where a cgroup v1 byte limit stops meaning anything: an unset
// memory.limit_in_bytes reads as about 2^63.
const noLimit = 1 << 60

// counter is one cgroup event counter, a "key N" line in a flat keyed file
// that the kernel increments each time a limit is hit.
type counter struct {
	resource string
	events   string // the keyed file; "" when the counter is not watched
	key      string
	limit    string // the file holding the limit, "max" or a number
	message  func(n, limit int64) string

	last int64
	// file is events, kept open so that a check costs a pread and an
	// fstat instead of a path walk, an open and a close; nil until the
	// first read, and again after a failed one. buf holds what it read.
	file *os.File
	buf  [512]byte
}

// memoryCounter counts OOM kills: oom_kill in memory.events (v2) or in
// memory/memory.oom_control (v1).
func memoryCounter(root string) counter {
	c := counter{resource: schemas.LimitMemory, key: "oom_kill", message: memoryMessage}
	c.events, c.limit = pick(
		[2]string{filepath.Join(root, "memory.events"), filepath.Join(root, "memory.max")},
		[2]string{filepath.Join(root, "memory", "memory.oom_control"), filepath.Join(root, "memory", "memory.limit_in_bytes")},
	)
	return c
}

// pidsCounter counts forks refused: max in pids.events (v2) or in
// pids/pids.events (v1).
func pidsCounter(root string) counter {
	c := counter{resource: schemas.LimitPIDs, key: "max", message: pidsMessage}
	c.events, c.limit = pick(
		[2]string{filepath.Join(root, "pids.events"), filepath.Join(root, "pids.max")},
		[2]string{filepath.Join(root, "pids", "pids.events"), filepath.Join(root, "pids", "pids.max")},
	)
	return c
}

// pick returns the first pair of files whose events file exists.
func pick(layouts ...[2]string) (events, limit string) {
	for _, l := range layouts {
		if _, err := os.Stat(l[0]); err == nil {
			return l[0], l[1]
		}
	}
	return "", ""
}

// start reads the counter's current value as the baseline; a counter that
// cannot be read is not watched.
func (c *counter) start() {
	if c.events == "" {
		return
	}
	n, err := c.read()
	if err != nil {
		c.events = ""
		return
	}
	c.last = n
}

// read returns the counter's current value. It reads the kept file again
// from its start (a cgroup file is generated anew at each read) and opens
// the file again when it was removed or a read failed, so that a counter
// whose file comes back is watched again.
func (c *counter) read() (int64, error) {
	if c.file != nil {
		var st syscall.Stat_t
		if syscall.Fstat(int(c.file.Fd()), &st) != nil || st.Nlink == 0 {
			c.closeFile()
		}
	}
	if c.file == nil {
		f, err := os.Open(c.events)
		if err != nil {
			return 0, err
		}
		c.file = f
	}
	n, err := c.file.ReadAt(c.buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		c.closeFile()
		return 0, fmt.Errorf("%s: %w", c.events, err)
	}
	if n == len(c.buf) {
		// Longer than any counter file the kernel writes: read it whole.
		return readKeyed(c.events, c.key)
	}
	return keyedValue(c.buf[:n], c.events, c.key)
}

func (c *counter) closeFile() {
	if c.file != nil {
		_ = c.file.Close()
		c.file = nil
	}
}

// check reports the hits counted since the last check. A read error is
// taken as "nothing seen this time"; a counter that went down (a cgroup
// created anew) becomes the new baseline.
func (c *counter) check() (schemas.LimitHit, bool) {
	if c.events == "" {
		return schemas.LimitHit{}, false
	}
	n, err := c.read()
	if err != nil {
		return schemas.LimitHit{}, false
	}
	delta := n - c.last
	c.last = n
	if delta <= 0 {
		return schemas.LimitHit{}, false
	}
	return schemas.LimitHit{Resource: c.resource, Count: delta, Message: c.message(delta, readLimit(c.limit))}, true
}

func memoryMessage(n, limit int64) string {
	what := fmt.Sprintf("the kernel killed %d %s", n, plural(n, "process", "processes"))
	if limit > 0 {
		return fmt.Sprintf("%s: the sandbox ran out of its %s of memory", what, resources.FormatBytes(limit))
	}
	return what + ": the sandbox ran out of memory"
}

func pidsMessage(n, limit int64) string {
	what := fmt.Sprintf("%d %s refused", n, plural(n, "fork", "forks"))
	if limit > 0 {
		return fmt.Sprintf("%s: the sandbox reached its limit of %d processes (threads count too)", what, limit)
	}
	return what + ": the sandbox reached its process limit"
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// readKeyed returns the value of key in a flat keyed file ("key N" lines).
func readKeyed(path, key string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return keyedValue(data, path, key)
}

// keyedValue returns the value of key in data, the content of the flat
// keyed file path. It does not allocate unless it fails.
func keyedValue(data []byte, path, key string) (int64, error) {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		k, v, ok := bytes.Cut(line, []byte(" "))
		if ok && string(k) == key {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %s: %w", path, key, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: no %s line", path, key)
}

// readLimit returns the limit in path, or 0 when there is none ("max", a
// v1 value near 2^63) or it cannot be read.
func readLimit(path string) int64 {
	if path == "" {
		return 0
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n <= 0 || n >= noLimit {
		return 0
	}
	return n
}
