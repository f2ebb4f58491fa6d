package filesystem

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools/outbox"
)

const (
	// watchKeep is how many of its latest events a watch keeps for
	// watch_events; the watch stream keeps them all.
	watchKeep = 1000
	// watchQuiet and watchSettle bound how long watch_stop waits for the
	// events of changes made just before it.
	watchQuiet  = 50 * time.Millisecond
	watchSettle = time.Second
)

// watch is one watched directory tree. Its loop goroutine alone reads the
// fsnotify watcher, emits events and changes dirs; mu guards what the
// tools read (info, recent).
type watch struct {
	ob        *outbox.Outbox
	budget    *outbox.Budget
	fw        *fsnotify.Watcher
	root      string
	globs     []glob
	recursive bool
	// maxDirs bounds the directories the watch covers: one beyond it is
	// reported with an overflow event and not watched.
	maxDirs int
	sandbox string
	stop    chan struct{}
	done    chan struct{} // closed once the loop ended
	// started is closed once the stream stored the watch's start (or the
	// outbox gave it up).
	started <-chan struct{}
	// dirs are the directories the watcher covers (the loop's alone).
	dirs map[string]bool
	// ending makes end stop the watch once.
	ending sync.Once

	mu        sync.Mutex
	info      schemas.WatchInfo
	truncated bool
	recent    []schemas.WatchEvent
	// changed is closed and replaced at every event, for watch_events'
	// waits.
	changed chan struct{}
}

// run is the watch's loop: it turns fsnotify's events into WatchEvents
// until stop is closed.
func (w *watch) run() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			// The kernel's queue overflowed (or a read failed): changes
			// were lost, and the reader must be told, never left to guess.
			_ = err
			w.emit(schemas.WatchOverflow, "", false)
		}
	}
}

// handle reports ev and keeps the watched directories up to date.
func (w *watch) handle(ev fsnotify.Event) {
	switch {
	case ev.Has(fsnotify.Create):
		info, err := os.Lstat(ev.Name)
		isDir := err == nil && info.IsDir()
		w.report(schemas.WatchCreate, ev.Name, isDir)
		if isDir && w.recursive {
			w.addTree(ev.Name, true)
		}
	case ev.Has(fsnotify.Write):
		w.report(schemas.WatchWrite, ev.Name, false)
	case ev.Has(fsnotify.Remove):
		isDir := w.dirs[ev.Name]
		w.forget(ev.Name)
		w.report(schemas.WatchRemove, ev.Name, isDir)
	case ev.Has(fsnotify.Rename):
		isDir := w.dirs[ev.Name]
		w.forget(ev.Name)
		w.report(schemas.WatchRename, ev.Name, isDir)
	}
}

// addTree watches dir and, when the watch is recursive, every directory
// below it. With announce (a directory that appeared after the watch
// started) it reports what it finds inside as created: those entries may
// have appeared before the watch on dir took hold. It returns the first
// error of adding dir itself.
func (w *watch) addTree(dir string, announce bool) error {
	var first error
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				first = err
			}
			return nil
		}
		if p != dir && announce {
			w.report(schemas.WatchCreate, p, d.IsDir())
		}
		if !d.IsDir() {
			return nil
		}
		if len(w.dirs) >= w.maxDirs {
			w.emit(schemas.WatchOverflow, "", false)
			return fs.SkipAll
		}
		if err := w.fw.Add(p); err != nil {
			if p == dir {
				first = err
			}
			return fs.SkipDir
		}
		w.dirs[p] = true
		if !w.recursive {
			return fs.SkipAll
		}
		return nil
	})
	return first
}

// forget stops watching p and every directory below it: p was removed or
// moved away (a moved directory is watched again under its new name when
// that is inside the watch).
func (w *watch) forget(p string) {
	for d := range w.dirs {
		if within(d, p) {
			_ = w.fw.Remove(d)
			delete(w.dirs, d)
		}
	}
}

// report emits a change of path abs when it matches the watch's globs.
func (w *watch) report(kind, abs string, isDir bool) {
	rel, err := filepath.Rel(w.root, abs)
	if err != nil || rel == "." {
		return
	}
	rel = filepath.ToSlash(rel)
	if len(w.globs) > 0 && !matchAny(w.globs, rel) {
		return
	}
	w.emit(kind, rel, isDir)
}

func matchAny(globs []glob, rel string) bool {
	for _, g := range globs {
		if g.match(rel) {
			return true
		}
	}
	return false
}

// emit numbers an event and queues it for the stream. It blocks while the
// outbox is full: the kernel's queue then fills, and its overflow is
// reported in turn. Once the sandbox's budget is spent it emits one
// truncated event and drops the rest.
func (w *watch) emit(kind, rel string, isDir bool) {
	w.mu.Lock()
	if w.truncated {
		w.mu.Unlock()
		return
	}
	ev := schemas.WatchEvent{WatchID: w.info.WatchID, N: w.info.Events + 1, Kind: kind, Path: rel, Dir: isDir, Time: time.Now().UTC()}
	data, _ := json.Marshal(ev) // a WatchEvent always encodes
	if !w.budget.Take(len(data)) {
		w.truncated = true
		ev = schemas.WatchEvent{WatchID: w.info.WatchID, N: ev.N, Kind: schemas.WatchTruncated, Time: ev.Time}
		data, _ = json.Marshal(ev)
	}
	w.info.Events = ev.N
	w.recent = append(w.recent, ev)
	if len(w.recent) > 2*watchKeep {
		w.recent = append(w.recent[:0:0], w.recent[len(w.recent)-watchKeep:]...)
	}
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
	w.ob.Send(schemas.WatchSubject(w.sandbox, ev.WatchID, schemas.WatchEventKind), strconv.FormatInt(ev.N, 10), data)
}

// end stops the watch, once however many call it (watch_stop and the
// family's close may race), and returns its final info.
func (w *watch) end() schemas.WatchInfo {
	w.ending.Do(w.stopNow)
	return w.snapshot()
}

// stopNow stops the loop and the fsnotify watcher, then publishes the
// watch's stop record after its last event and waits for the outbox to
// empty (or its context to end).
func (w *watch) stopNow() {
	w.settle()
	close(w.stop)
	<-w.done
	_ = w.fw.Close()
	w.mu.Lock()
	now := time.Now().UTC()
	w.info.Running, w.info.StoppedAt = false, &now
	info := w.info
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
	data, _ := json.Marshal(info)
	w.ob.Send(schemas.WatchSubject(w.sandbox, info.WatchID, schemas.WatchStopKind), "stop", data)
	w.ob.Close()
}

// settle waits until the watch saw no event for watchQuiet (at most
// watchSettle), so that a stop reports the changes made before it: the
// kernel hands events on within microseconds, but the loop may not have
// read them yet.
func (w *watch) settle() {
	deadline := time.Now().Add(watchSettle)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		n := w.info.Events
		w.mu.Unlock()
		time.Sleep(watchQuiet)
		w.mu.Lock()
		quiet := n == w.info.Events
		w.mu.Unlock()
		if quiet {
			return
		}
	}
}

// snapshot returns the watch's info as it is now.
func (w *watch) snapshot() schemas.WatchInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.info
}

// since returns the kept events numbered after n, and a channel closed at
// the next event or stop.
func (w *watch) since(n int64) ([]schemas.WatchEvent, <-chan struct{}, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []schemas.WatchEvent
	for _, ev := range w.recent {
		if ev.N > n {
			out = append(out, ev)
		}
	}
	return out, w.changed, w.info.Running
}
