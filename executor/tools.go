package executor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/builtin"
	"github.com/sandox/sandox/tools/python"
)

// Tools builds the registry of a sandbox: the built-in families that
// env.Executor.Families names (catalog.Default when it names none), opened
// in the order of the catalog, then the user's Python tool files from
// env.Executor.ToolsDir, whose Python tool host starts on first need (an
// action naming one of their modules or a bare function, or a tools
// listing): see tools.Registry.AddLazy. A tool file that fails to import is
// logged then and left out; the others still load. An unknown family, or a family that fails to
// open, is an error, and whatever was opened is closed again. The returned
// func closes every family and the Python host, in reverse order.
func Tools(ctx context.Context, env tools.Env) (*tools.Registry, func(), error) {
	pre, err := PreopenTools(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	return pre.Finish(ctx, env)
}

// PendingTools are the families of a sandbox opened ahead of its identity:
// a pooled executor opens, while it waits for its claim, every family that
// does not bind the sandbox's id (catalog.Family.NeedsIdentity), and the rest
// once claimed (Finish). A family's Open runs no action, so a pooled
// sandbox still has never run one.
type PendingTools struct {
	env  tools.Env
	fams []builtin.Family
	// opened holds, per family of fams, what Open gave; nil where the
	// family waits for the identity.
	opened []*tools.Opened
}

// PreopenTools opens the families env.Executor.Families names that need
// no identity, in the order of the catalog. On error whatever was
// opened is closed again.
func PreopenTools(ctx context.Context, env tools.Env) (*PendingTools, error) {
	fams, err := builtin.Select(env.Executor.Families)
	if err != nil {
		return nil, err
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	if env.Dir == nil {
		env.Dir = tools.NewWorkDir(env.Executor.Workspace)
	}
	p := &PendingTools{env: env, fams: fams, opened: make([]*tools.Opened, len(fams))}
	for i, f := range fams {
		if f.NeedsIdentity {
			continue
		}
		if err := p.open(ctx, i, env); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

// Finish opens, with env (the claimed sandbox's: its id and group), the
// families still closed, adds the user's Python tool files, and returns
// the registry and the func that closes every family and the Python host,
// in reverse order. Families other than those PreopenTools was given are
// all opened again. On error everything is closed.
func (p *PendingTools) Finish(ctx context.Context, env tools.Env) (*tools.Registry, func(), error) {
	if !slices.Equal(env.Executor.Families, p.env.Executor.Families) {
		p.close()
		fresh, err := PreopenTools(ctx, env)
		if err != nil {
			return nil, nil, err
		}
		p = fresh
	}
	env.Dir = p.env.Dir
	if env.Log == nil {
		env.Log = p.env.Log
	}
	for i := range p.fams {
		if p.opened[i] != nil {
			continue
		}
		if err := p.open(ctx, i, env); err != nil {
			p.close()
			return nil, nil, err
		}
	}
	reg := tools.NewRegistry()
	var closers []func() error
	for _, o := range p.opened {
		if o.Close != nil {
			closers = append(closers, o.Close)
		}
		reg.Add(o.Tools...)
	}
	if mods := pythonModules(env.Executor.ToolsDir); len(mods) > 0 {
		py := &lazyPython{cfg: python.Config{Dir: env.Executor.ToolsDir, WorkDir: env.Dir.Get, Logger: env.Log}, log: env.Log}
		closers = append(closers, py.close)
		reg.AddLazy(mods, py.start)
	}
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil {
				env.Log.Warn("close tools", "err", err)
			}
		}
	}
	return reg, closeAll, nil
}

// open opens family i of p with env.
func (p *PendingTools) open(ctx context.Context, i int, env tools.Env) error {
	opened, err := p.fams[i].Open(ctx, env)
	if err != nil {
		return fmt.Errorf("open tool family %s: %w", p.fams[i].Name, err)
	}
	p.opened[i] = &opened
	return nil
}

// close closes the families opened so far, in reverse order.
func (p *PendingTools) close() {
	for i := len(p.opened) - 1; i >= 0; i-- {
		if o := p.opened[i]; o != nil && o.Close != nil {
			if err := o.Close(); err != nil {
				p.env.Log.Warn("close tools", "err", err)
			}
		}
		p.opened[i] = nil
	}
}

// pythonModules names the tool modules of the Python files in dir, as the
// tool host imports them (every *.py file not starting with "_" or "."). A
// directory that cannot be read yields none.
func pythonModules(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && strings.HasSuffix(n, ".py") && len(n) > 3 && !strings.HasPrefix(n, "_") && !strings.HasPrefix(n, ".") {
			out = append(out, strings.TrimSuffix(n, ".py"))
		}
	}
	return out
}

// lazyPython starts the Python tool host on first need
// (tools.Registry.AddLazy): a sandbox whose user tools are not called
// starts no Python process, and its start does not wait for one.
type lazyPython struct {
	cfg python.Config
	log *slog.Logger

	mu   sync.Mutex
	host *python.Host
}

// start launches the host and returns its tools. Tool files that fail to
// import are logged; the others are served.
func (p *lazyPython) start() ([]tools.Tool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	host, err := python.Start(ctx, p.cfg)
	if host == nil {
		return nil, fmt.Errorf("python tool host: %w", err)
	}
	if err != nil {
		p.log.Error("some tool files did not load", "err", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host = host
	return host.Tools(), nil
}

// close stops the host if it was started.
func (p *lazyPython) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.host == nil {
		return nil
	}
	return p.host.Close()
}
