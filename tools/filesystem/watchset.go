package filesystem

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/outbox"
)

// DefaultMaxWatches is how many watches a sandbox may run at once when
// WatchConfig.MaxWatches is zero.
const DefaultMaxWatches = 16

// DefaultMaxWatchDirs is how many directories one watch covers when
// WatchConfig.MaxDirs is zero: each takes one of the kernel's inotify
// watches, of which a user has 8192 by default.
const DefaultMaxWatchDirs = 4096

// WatchConfig is what the file watches (watch_start) need beyond Config.
type WatchConfig struct {
	// Publish stores a watch's records in the watch stream
	// (schemas.WatchStream); nil keeps them in the executor only
	// (watch_events still serves them).
	Publish outbox.PublishFunc
	// SandboxID returns the sandbox the watches run in, for their
	// subjects; nil means "".
	SandboxID func() string
	// Root is the directory every watched path must lie in (the
	// workspace); "" allows any.
	Root string
	// MaxWatches bounds the watches running at once; zero or less means
	// DefaultMaxWatches.
	MaxWatches int
	// MaxDirs bounds the directories one watch covers; zero or less
	// means DefaultMaxWatchDirs.
	MaxDirs int
	// Budget is the sandbox's stream budget, shared with its jobs; nil is
	// no limit.
	Budget *outbox.Budget
}

// watchSet owns the watches of a sandbox. It is safe for concurrent use.
//
// Lock order: watchSet.mu before watch.mu.
type watchSet struct {
	cfg WatchConfig
	// ctx ends when the set closes: the outboxes stop retrying then.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	byID   map[string]*watch
	closed bool
}

func newWatchSet(cfg WatchConfig) *watchSet {
	if cfg.SandboxID == nil {
		cfg.SandboxID = func() string { return "" }
	}
	if cfg.MaxWatches <= 0 {
		cfg.MaxWatches = DefaultMaxWatches
	}
	if cfg.MaxDirs <= 0 {
		cfg.MaxDirs = DefaultMaxWatchDirs
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &watchSet{cfg: cfg, ctx: ctx, cancel: cancel, byID: map[string]*watch{}}
}

// watchRequest is what watch_start asks for.
type watchRequest struct {
	id        string
	dir       string // absolute
	patterns  []string
	recursive bool
}

// start watches req.dir and returns once its start is stored in the
// stream (or after startStored). Errors: a bad id or pattern, a path
// outside the root or not a directory, an id in use, too many watches.
func (ws *watchSet) start(req watchRequest) (schemas.WatchInfo, error) {
	if req.id == "" {
		req.id = newWatchID()
	}
	if err := schemas.ValidateID("watch", req.id); err != nil {
		return schemas.WatchInfo{}, fmt.Errorf("%w: %w", schemas.CodeInvalidArgs, err)
	}
	globs := make([]glob, 0, len(req.patterns))
	for _, p := range req.patterns {
		g, err := compileGlob(p)
		if err != nil {
			return schemas.WatchInfo{}, fmt.Errorf("%w: watch pattern %q: %v", schemas.CodeInvalidArgs, p, err)
		}
		globs = append(globs, g)
	}
	dir, err := ws.checkRoot(req.dir)
	if err != nil {
		return schemas.WatchInfo{}, err
	}
	w, err := ws.add(req, dir, globs)
	if err != nil {
		return schemas.WatchInfo{}, err
	}
	select {
	case <-w.started:
	case <-time.After(startStored):
	}
	return w.snapshot(), nil
}

// startStored bounds how long watch_start waits for the stream to store
// the watch's start.
const startStored = 5 * time.Second

// checkRoot resolves dir's symbolic links and checks that it is a
// directory inside the configured root.
func (ws *watchSet) checkRoot(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%w: watch %s: %w", schemas.CodeInvalidArgs, dir, err)
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%w: watch %s: %w", schemas.CodeInvalidArgs, dir, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%w: watch %s: not a directory (watch its directory, with a pattern for the file)", schemas.CodeInvalidArgs, dir)
	}
	if ws.cfg.Root != "" {
		root, err := filepath.EvalSymlinks(ws.cfg.Root)
		if err != nil {
			root = ws.cfg.Root
		}
		if !within(real, root) {
			return "", fmt.Errorf("%w: watch %s: outside the workspace %s", schemas.CodeInvalidArgs, dir, ws.cfg.Root)
		}
	}
	return real, nil
}

// add makes the watch of req on dir, records it and starts its loop.
func (ws *watchSet) add(req watchRequest, dir string, globs []glob) (*watch, error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed {
		return nil, errWatchesClosed
	}
	if _, ok := ws.byID[req.id]; ok {
		return nil, schemas.Errorf(schemas.CodeAlreadyExists, "%w: watch %q exists already", schemas.CodeInvalidArgs, req.id)
	}
	running := 0
	for _, w := range ws.byID {
		if w.snapshot().Running {
			running++
		}
	}
	if running >= ws.cfg.MaxWatches {
		return nil, schemas.Errorf(schemas.CodeResourceExhausted, "%d watches run already, the most this sandbox may (stop one with watch_stop)", running)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	sandbox := ws.cfg.SandboxID()
	w := &watch{
		budget: ws.cfg.Budget, fw: fw, root: dir, globs: globs, recursive: req.recursive, maxDirs: ws.cfg.MaxDirs, sandbox: sandbox,
		stop: make(chan struct{}), done: make(chan struct{}), dirs: map[string]bool{}, changed: make(chan struct{}),
		info: schemas.WatchInfo{WatchID: req.id, SandboxID: sandbox, Path: dir, Patterns: req.patterns,
			Recursive: req.recursive, StartedAt: time.Now().UTC(), Running: true},
	}
	// The outbox is there before the tree is added: a tree past MaxDirs
	// emits an overflow event right away.
	w.ob = outbox.New(ws.ctx, ws.cfg.Publish, sandbox+"/watch/"+req.id)
	if err := w.addTree(dir, false); err != nil {
		_ = fw.Close()
		w.ob.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	data, _ := json.Marshal(w.info)
	w.started = w.ob.Send(schemas.WatchSubject(sandbox, req.id, schemas.WatchStartKind), "start", data)
	ws.byID[req.id] = w
	go w.run()
	return w, nil
}

// lookup returns watch id; an unknown id is tools.ErrNotFound.
func (ws *watchSet) lookup(id string) (*watch, error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w, ok := ws.byID[id]
	if !ok {
		return nil, schemas.Errorf(schemas.CodeNotFound, "watch %q: %w", id, tools.ErrNotFound)
	}
	return w, nil
}

// list returns every watch's info, the newest first.
func (ws *watchSet) list() []schemas.WatchInfo {
	ws.mu.Lock()
	infos := make([]schemas.WatchInfo, 0, len(ws.byID))
	for _, w := range ws.byID {
		infos = append(infos, w.snapshot())
	}
	ws.mu.Unlock()
	sort.Slice(infos, func(a, b int) bool { return infos[a].StartedAt.After(infos[b].StartedAt) })
	return infos
}

// close stops every watch, publishing their stop records (for at most a
// few seconds: the bus may be away). It is safe to call more than once.
func (ws *watchSet) close() error {
	ws.mu.Lock()
	ws.closed = true
	watches := make([]*watch, 0, len(ws.byID))
	for _, w := range ws.byID {
		watches = append(watches, w)
	}
	ws.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, w := range watches {
			w.end()
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		ws.cancel()
		<-done
	}
	ws.cancel()
	return nil
}

// errWatchesClosed is what watch_start returns after the family closed.
var errWatchesClosed = errors.New("filesystem_tools closed")

// newWatchID returns a fresh watch id: "watch-" and 12 hex digits.
func newWatchID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "watch-" + hex.EncodeToString(b)
}
