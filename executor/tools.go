package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/builtin"
	"github.com/sandox/sandox/tools/python"
)

// Tools builds the registry of a sandbox: the built-in families that
// env.Executor.Families names (builtin.Default when it names none), opened
// in the order of the module list, then the user's Python tool files from
// env.Executor.ToolsDir. A tool file that fails to import is logged and left
// out; the others still load. An unknown family, or a family that fails to
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
	if hasPython(env.Executor.ToolsDir) {
		host, err := python.Start(ctx, python.Config{Dir: env.Executor.ToolsDir, WorkDir: env.Dir.Get, Logger: env.Log})
		if host == nil {
			closeAll()
			return nil, nil, fmt.Errorf("python tool host: %w", err)
		}
		if err != nil {
			env.Log.Error("some tool files did not load", "err", err)
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
		if !e.IsDir() && len(e.Name()) > 3 && strings.HasSuffix(e.Name(), ".py") {
			return true
		}
	}
	return false
}
