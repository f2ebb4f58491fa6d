package executor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/builtin"
	"github.com/sandox/sandox/tools/python"
)

// Tools builds the registry of a sandbox: the built-in families that
// env.Executor.Families names (builtin.Default when it names none), opened
// in the order of the module list, then the user's Python tool files from
// env.Executor.ToolsDir, whose Python tool host starts on first need (an
// action naming one of their modules or a bare function, or a tools
// listing): see tools.Registry.AddLazy. A tool file that fails to import is
// logged then and left out; the others still load. An unknown family, or a family that fails to
// open, is an error, and whatever was opened is closed again. The returned
// func closes every family and the Python host, in reverse order.
func Tools(ctx context.Context, env tools.Env) (*tools.Registry, func(), error) {
	mods, err := builtin.Select(env.Executor.Families)
	if err != nil {
		return nil, nil, err
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	if env.Dir == nil {
		env.Dir = tools.NewWorkDir(env.Executor.Workspace)
	}
	reg := tools.NewRegistry()
	var closers []func() error
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil {
				env.Log.Warn("close tools", "err", err)
			}
		}
	}
	for _, m := range mods {
		opened, err := m.Open(ctx, env)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("open tool family %s: %w", m.Name, err)
		}
		if opened.Close != nil {
			closers = append(closers, opened.Close)
		}
		reg.Add(opened.Tools...)
	}
	if mods := pythonModules(env.Executor.ToolsDir); len(mods) > 0 {
		py := &lazyPython{cfg: python.Config{Dir: env.Executor.ToolsDir, WorkDir: env.Dir.Get, Logger: env.Log}, log: env.Log}
		closers = append(closers, py.close)
		reg.AddLazy(mods, py.start)
	}
	return reg, closeAll, nil
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
