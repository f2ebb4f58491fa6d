package limits

import (
	"errors"
	"sync"
	"syscall"
	"time"

	"github.com/sandox/sandox/schemas"
)

// Config says where a Watcher looks.
type Config struct {
	// CgroupRoot is where the sandbox's cgroup is mounted; "" means
	// /sys/fs/cgroup. Both the v1 layout (memory/, pids/) and the v2
	// layout (memory.events, pids.events) are read.
	CgroupRoot string
	// Workspace is the sandbox's writable working directory.
	Workspace string
	// DiskLimitBytes is the size of the workspace's own file system, or 0
	// when the workspace has no disk limit (and so no file system of its
	// own).
	DiskLimitBytes int64
}

// DefaultConfig returns the configuration of an executor in a sandbox
// container: no disk limit.
func DefaultConfig() Config {
	return Config{CgroupRoot: "/sys/fs/cgroup", Workspace: "/workspace"}
}

// How far a walk of a workspace without a disk limit goes before Usage
// gives up and returns a lower bound.
const (
	walkMaxEntries  = 1_000_000
	walkMaxDuration = 2 * time.Second
)

// Watcher reports the limits a sandbox ran into. Create it with New. It is
// safe for concurrent use.
type Watcher struct {
	workspace string
	diskLimit int64

	// Set by New; tests replace them.
	statfs    func(path string, st *syscall.Statfs_t) error
	walkMax   int
	walkUntil time.Duration

	mu      sync.Mutex // guards the fields below
	memory  counter
	pids    counter
	disk    diskState
	pending []schemas.LimitHit
}

// New returns a watcher for cfg. It reads the cgroup counters once, so that
// the first Check reports only what happens after New. A counter whose file
// is missing or unreadable is not watched; that is not an error. New fails
// only on a configuration that makes no sense.
func New(cfg Config) (*Watcher, error) {
	if cfg.Workspace == "" {
		return nil, errors.New("limits: no workspace directory")
	}
	if cfg.DiskLimitBytes < 0 {
		return nil, errors.New("limits: negative disk limit")
	}
	if cfg.CgroupRoot == "" {
		cfg.CgroupRoot = DefaultConfig().CgroupRoot
	}
	w := &Watcher{
		workspace: cfg.Workspace,
		diskLimit: cfg.DiskLimitBytes,
		statfs:    syscall.Statfs,
		walkMax:   walkMaxEntries,
		walkUntil: walkMaxDuration,
		memory:    memoryCounter(cfg.CgroupRoot),
		pids:      pidsCounter(cfg.CgroupRoot),
	}
	w.memory.start()
	w.pids.start()
	return w, nil
}

// Check returns the limits the sandbox ran into since the previous Check
// (or since New): the notices queued with Notify, then processes the kernel
// killed for memory, forks refused, and a workspace disk that became full.
// A full disk is reported once, when it fills up, and again only after it
// had room again. Check reads a few small files, so it is cheap enough to
// call after every action. What it cannot read it leaves out; it returns
// nil when nothing happened.
func (w *Watcher) Check() []schemas.LimitHit {
	w.mu.Lock()
	defer w.mu.Unlock()
	hits := w.pending
	w.pending = nil
	for _, c := range []*counter{&w.memory, &w.pids} {
		if h, ok := c.check(); ok {
			hits = append(hits, h)
		}
	}
	if w.diskLimit > 0 {
		if h, ok := w.disk.check(w.statfs, w.workspace, w.diskLimit); ok {
			hits = append(hits, h)
		}
	}
	return hits
}

// Notify queues h, a limit the sandbox ran into that the watcher cannot see
// itself (a restart by the orchestrator, say), for the next Check.
func (w *Watcher) Notify(h schemas.LimitHit) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, h)
}
