package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/filesystem"
	"github.com/sandox/sandox/tools/python"
	"github.com/sandox/sandox/tools/terminal"
	"github.com/sandox/sandox/tools/web"
)

// ToolsConfig says where a sandbox's tools find their files.
type ToolsConfig struct {
	// ToolsDir holds the user's Python tool files.
	ToolsDir string
	// Workspace is the sandbox's writable working directory.
	Workspace string
	// UVIndex is a local package index or wheel directory for uv, if any.
	UVIndex string
	// Search answers web_tools.web_search (the control plane's search
	// service over NATS). Nil: web_search reports that there is none.
	Search web.Searcher
}

// Tools builds the registry of a sandbox: the built-in Go modules, then the
// user's Python tool files, which extend a built-in module of the same name
// or replace its functions of the same name. A tool file that fails to
// import is logged and left out; the others still load. The returned func
// stops the terminal sessions, the browser and the Python host.
func Tools(ctx context.Context, cfg ToolsConfig, log *slog.Logger) (*tools.Registry, func(), error) {
	term := terminal.NewManager(terminal.Config{Dir: cfg.Workspace, UVIndex: cfg.UVIndex})
	reg := tools.NewRegistry(term.Tools()...)
	reg.Add(filesystem.Tools(filesystem.Config{Dir: term.Dir})...)

	wt := web.New(web.Config{Workspace: cfg.Workspace, Search: cfg.Search, Logger: log})
	reg.Add(wt.Tools()...)

	closers := []func() error{term.Close, wt.Close}
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil {
				log.Warn("close tools", "err", err)
			}
		}
	}
	if hasPython(cfg.ToolsDir) {
		host, err := python.Start(ctx, python.Config{Dir: cfg.ToolsDir, WorkDir: term.Dir, Logger: log})
		if host == nil {
			closeAll()
			return nil, nil, fmt.Errorf("python tool host: %w", err)
		}
		if err != nil {
			log.Error("some tool files did not load", "err", err)
		}
		closers = append(closers, host.Close)
		reg.Add(host.Tools()...)
	}
	return reg, closeAll, nil
}

func hasPython(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return true // let the host report the problem
		}
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && len(e.Name()) > 3 && e.Name()[len(e.Name())-3:] == ".py" {
			return true
		}
	}
	return false
}
