package python

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// hostFiles is the host: toolhost.py, the script to run, and the module it
// loads from beside itself.
//
//go:embed toolhost.py toolschema.py
var hostFiles embed.FS

const (
	// startTimeout bounds the wait for a host's hello (Start, restarts)
	// when the context has no deadline.
	startTimeout = 30 * time.Second
	// closeGrace is how long Close lets an idle host exit by itself.
	closeGrace = time.Second
)

// Config says how to run the Python tool host. Zero values take the
// defaults documented on each field.
type Config struct {
	// Python is the interpreter, "python3" when empty.
	Python string
	// Dir holds the tool files: each *.py file is one tool module named
	// after the file. It is on the host's sys.path, so tool files can import
	// each other, and it is the host's working directory between calls.
	Dir string
	// WorkDir returns the working directory for a call (the terminal
	// session's). When nil or when it returns "", calls run in Dir.
	WorkDir func() string
	// Env is the host's environment; the executor's own when nil.
	Env []string
	// Logger receives the host's restarts; nothing is logged when nil.
	Logger *slog.Logger
}

// ErrClosed is returned by calls made after Close.
var ErrClosed = schemas.Errorf(schemas.CodeUnavailable, "python tool host is closed")

// Host runs the Python tool files of one sandbox in a long-lived child
// process and exposes their functions as tools. Calls are served one at a
// time, in the order they acquire the host. It is safe for concurrent use.
type Host struct {
	cfg       Config
	scriptDir string // where the host files were written
	script    string // toolhost.py in scriptDir
	tools     []tools.Tool

	// Lock order: callMu, then mu.
	callMu sync.Mutex // held for the whole of a call
	mu     sync.Mutex // guards proc and closed
	proc   *process   // nil when no host runs; the next call starts one
	closed bool
}

// Start writes the host files to a new directory in the temp directory and
// launches the host, which imports every tool file in cfg.Dir once. It
// returns the Host with one tool per public function the files define. It
// blocks until the host has reported its tools or ctx is done (30s when ctx
// has no deadline).
//
// Start returns a nil Host only when the host could not start at all (no
// interpreter, cfg.Dir missing, ctx done). When some tool files fail to
// import, Start still returns a working Host serving the files that did,
// together with the errors.Join of one *ImportError per broken file: one
// broken file never hides the others. The caller decides whether to go on;
// a Host that Start returned must be closed either way.
func Start(ctx context.Context, cfg Config) (*Host, error) {
	if cfg.Python == "" {
		cfg.Python = "python3"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Dir == "" {
		return nil, errors.New("python tool host: no tool directory")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("python tool directory: %w", err)
	}
	if info, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("python tool directory: %w", err)
	} else if !info.IsDir() {
		return nil, fmt.Errorf("python tool directory %s: not a directory", dir)
	}
	cfg.Dir = dir
	scriptDir, err := writeHostFiles()
	if err != nil {
		return nil, err
	}
	script := filepath.Join(scriptDir, "toolhost.py")
	p, err := startProcess(ctx, cfg, script)
	if err != nil {
		os.RemoveAll(scriptDir)
		return nil, err
	}
	h := &Host{cfg: cfg, scriptDir: scriptDir, script: script, proc: p}
	for _, info := range p.hello.Tools {
		h.tools = append(h.tools, h.tool(info))
	}
	cfg.Logger.Debug("python tool host started", "dir", dir, "python", p.hello.Python,
		"tools", len(h.tools), "import_errors", len(p.hello.Errors))
	return h, importErrors(p.hello.Errors)
}

// writeHostFiles copies the embedded host files to a new directory in the
// temp directory, the one place besides the workspace a sandbox may write.
func writeHostFiles() (string, error) {
	dir, err := os.MkdirTemp("", "sandox-toolhost-*")
	if err != nil {
		return "", fmt.Errorf("write python tool host: %w", err)
	}
	if err := os.CopyFS(dir, hostFiles); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("write python tool host: %w", err)
	}
	return dir, nil
}

// Tools returns the tools found at Start, in file and definition order.
func (h *Host) Tools() []tools.Tool {
	return append([]tools.Tool(nil), h.tools...)
}

// Close stops the host: an idle host gets a second to exit by itself, a
// busy one is killed at once, along with the processes tool functions left
// running. Close waits for a call in progress to return (with ErrClosed)
// and removes the host files. Calls after Close return ErrClosed. Closing
// twice is a no-op.
func (h *Host) Close() error {
	idle := h.callMu.TryLock()
	h.mu.Lock()
	p, closed := h.proc, h.closed
	h.proc, h.closed = nil, true
	h.mu.Unlock()
	if !closed && p != nil {
		grace := time.Duration(0) // a busy host may be stuck in a tool function
		if idle {
			grace = closeGrace
		}
		p.stop(grace)
		p.release()
	}
	if !idle {
		h.callMu.Lock() // wait for the call in progress to give up
	}
	h.callMu.Unlock()
	if closed {
		return nil
	}
	return os.RemoveAll(h.scriptDir)
}

// running returns the current host process, starting one if the last was
// killed or died.
func (h *Host) running(ctx context.Context) (*process, error) {
	h.mu.Lock()
	p, closed := h.proc, h.closed
	h.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if p != nil {
		return p, nil
	}
	p, err := startProcess(ctx, h.cfg, h.script) // imports the tool files again
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("restart python tool host: %w", ctx.Err())
		}
		return nil, schemas.Errorf(schemas.CodeUnavailable, "restart python tool host: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		p.stop(0)
		p.release()
		return nil, ErrClosed
	}
	h.proc = p
	h.cfg.Logger.Info("python tool host restarted", "tools", len(p.hello.Tools),
		"import_errors", len(p.hello.Errors))
	return p, nil
}

// discard forgets p after it was killed or died.
func (h *Host) discard(p *process) {
	p.stop(0)
	p.release()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.proc == p {
		h.proc = nil
	}
}

func (h *Host) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

func (h *Host) workDir() string {
	if h.cfg.WorkDir == nil {
		return ""
	}
	return h.cfg.WorkDir()
}
