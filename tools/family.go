package tools

import (
	"context"
	"log/slog"
	"sync"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools/outbox"
)

// OpenFunc builds a family's tools in the executor. It runs once per
// executor, in the order of the family list (catalog.Families), before the
// executor serves anything. Package builtin maps each family's name to its
// OpenFunc.
type OpenFunc func(ctx context.Context, env Env) (Opened, error)

// Opened is a family built in the executor: its tools, and how it closes.
type Opened struct {
	Tools []Tool
	// Close stops what the tools run (sessions, processes, browsers). It is
	// called once, after the last tool call; nil means nothing to stop.
	Close func() error
}

// Env is what a family's Open gets from the executor.
type Env struct {
	// Executor is the executor's typed environment, as the orchestrator set
	// it: the sandbox and group ids, the workspace, the tools directory, …
	Executor schemas.ExecutorEnv
	// Dir is the working directory relative paths resolve against; the
	// families share it.
	Dir *WorkDir
	// Request sends a request on a NATS subject and waits for the reply, for
	// families that forward calls to a control-plane service. Nil when the
	// executor has no connection (unit tests).
	Request func(ctx context.Context, subject string, data []byte) ([]byte, error)
	// Publish sends data on subject and returns once a stream stored it
	// (a JetStream publish with msgID as Nats-Msg-Id, so that the stream
	// drops a repeat of a retried message), for families whose work
	// outlives the action (terminal_tools' jobs). It fails when the bus is
	// away; the caller retries. Nil when the executor has no connection
	// (unit tests).
	Publish func(ctx context.Context, subject, msgID string, data []byte) error
	// Budget is the sandbox's stream budget: how many bytes of job output
	// and watch events its families may still Publish (a setting of the
	// operator's, schemas.ExecutorEnv.StreamBudget). Nil is no limit.
	Budget *outbox.Budget
	// SandboxID returns the id of the sandbox the executor serves now:
	// for a pooled executor, the claimed sandbox's once claimed, whereas
	// Executor.SandboxID is fixed when the family opens. Nil means
	// Executor.SandboxID.
	SandboxID func() string
	// Log is the executor's logger, tagged with the sandbox and group;
	// never nil.
	Log *slog.Logger
}

// Sandbox returns the id of the sandbox the executor serves now (SandboxID,
// else Executor.SandboxID).
func (e Env) Sandbox() string {
	if e.SandboxID != nil {
		return e.SandboxID()
	}
	return e.Executor.SandboxID
}

// WorkDir is the working directory the families share: the workspace, or,
// once a family follows something that moves (the terminal's default
// shell), what that reports. It is safe for concurrent use.
type WorkDir struct {
	mu     sync.Mutex
	base   string
	follow func() string
}

// NewWorkDir returns a working directory fixed at dir until Follow is called.
func NewWorkDir(dir string) *WorkDir { return &WorkDir{base: dir} }

// Follow makes Get return what f returns (or the base directory when f
// returns "").
func (d *WorkDir) Follow(f func() string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.follow = f
}

// Base returns the directory the WorkDir started at.
func (d *WorkDir) Base() string { return d.base }

// Get returns the current working directory. It does not block on anything
// but the followed func.
func (d *WorkDir) Get() string {
	d.mu.Lock()
	f := d.follow
	d.mu.Unlock()
	if f != nil {
		if dir := f(); dir != "" {
			return dir
		}
	}
	return d.base
}
