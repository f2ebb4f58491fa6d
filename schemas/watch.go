package schemas

import "time"

// WatchStream keeps what the file watches of every sandbox publish
// (WatchStreamSubjects): a reader resumes a watch's events from the last
// stream sequence it saw. It is a stream of its own, not part of
// JobStream, so that its limits are its own: a watch on a busy tree (a
// package install) cannot push job output out of the job stream, nor a
// noisy job a watch's events.
const WatchStream = "SANDOX_WATCH"

// WatchStreamSubjects are the subjects WatchStream captures.
const WatchStreamSubjects = "sandbox.*.watch.>"

// The kinds of message a watch publishes, the last token of WatchSubject.
const (
	// WatchStartKind carries the WatchInfo when the watch starts.
	WatchStartKind = "start"
	// WatchEventKind carries a WatchEvent per change.
	WatchEventKind = "event"
	// WatchStopKind carries the WatchInfo, with StoppedAt, as the last
	// message of a watch.
	WatchStopKind = "stop"
)

// The kinds of WatchEvent.
const (
	// WatchCreate: a file or directory appeared (created, or moved in).
	WatchCreate = "create"
	// WatchWrite: a file was written to.
	WatchWrite = "write"
	// WatchRemove: a file or directory was deleted.
	WatchRemove = "remove"
	// WatchRename: a file or directory was moved away from Path (its new
	// name, when it is watched too, comes as a create).
	WatchRename = "rename"
	// WatchOverflow: the kernel dropped events (its queue was full). Some
	// changes between the previous event and this one are not reported:
	// rescan what matters.
	WatchOverflow = "overflow"
	// WatchTruncated: the sandbox spent its stream budget; the watch
	// publishes no more events (it still stops with WatchStopKind).
	WatchTruncated = "truncated"
)

// WatchInfo describes a watch: the answer of filesystem_tools.watch_start
// (in the observation's return), one entry of watch_list, and the first
// and last message of the watch on WatchSubject.
type WatchInfo struct {
	// WatchID names the watch within its sandbox (ValidateID).
	WatchID string `json:"watch_id"`
	// SandboxID is the sandbox the watch runs in.
	SandboxID string `json:"sandbox_id"`
	// Path is the absolute directory watched.
	Path string `json:"path"`
	// Patterns, when not empty, are the globs a path relative to Path must
	// match (one of them) to be reported: "*.py" matches the base name at
	// any depth, "src/**/*.go" the whole relative path.
	Patterns []string `json:"patterns,omitempty"`
	// Recursive is true when the watch covers the subdirectories too
	// (those created later included).
	Recursive bool `json:"recursive"`
	// StartedAt is when the watch started.
	StartedAt time.Time `json:"started_at"`
	// Running is true until the watch stopped.
	Running bool `json:"running"`
	// Events counts the events published so far.
	Events int64 `json:"events"`
	// StoppedAt is when the watch stopped, once it did.
	StoppedAt *time.Time `json:"stopped_at,omitempty"`
}

// WatchEvent is one change a watch saw, published on WatchSubject(sandbox,
// watch, WatchEventKind) in the order seen. N numbers the watch's events
// from 1, so a reader can tell a repeated event from a new one.
type WatchEvent struct {
	WatchID string `json:"watch_id"`
	// N is the event's number within its watch, from 1, without gaps.
	N int64 `json:"n"`
	// Kind is WatchCreate, WatchWrite, WatchRemove, WatchRename,
	// WatchOverflow or WatchTruncated.
	Kind string `json:"kind" jsonschema:"enum=create,enum=write,enum=remove,enum=rename,enum=overflow,enum=truncated"`
	// Path is the changed path relative to the watched directory,
	// slash-separated; empty for overflow and truncated.
	Path string `json:"path,omitempty"`
	// Dir is true when the path is a directory (as far as known: a
	// removed path is no longer there to tell).
	Dir bool `json:"dir,omitempty"`
	// Time is when the executor saw the change.
	Time time.Time `json:"time"`
}

// WatchSubject is where a sandbox's watch publishes messages of kind
// (WatchStartKind, WatchEventKind, WatchStopKind).
func WatchSubject(sandboxID, watchID, kind string) string {
	return "sandbox." + sandboxID + ".watch." + watchID + "." + kind
}

// WatchSubjects matches every message of one watch.
func WatchSubjects(sandboxID, watchID string) string {
	return "sandbox." + sandboxID + ".watch." + watchID + ".>"
}

// SandboxWatchSubjects matches every message of every watch of one
// sandbox: the only watch subjects its identity may publish.
func SandboxWatchSubjects(sandboxID string) string { return "sandbox." + sandboxID + ".watch.>" }
