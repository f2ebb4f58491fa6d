package terminal

import (
	"context"

	"github.com/sandox/sandox/tools"
)

// Family returns the terminal_tools family for the module list (package
// builtin). Its sessions start in the workspace, and the shared working
// directory follows the default session's cd. It needs nothing beyond the
// default sandbox image (bash, python3 and uv are there); closing it kills
// every session.
func Family() tools.Module {
	return tools.Module{
		Name:    Module,
		Summary: "persistent bash sessions, long-running commands, uv and Python",
		Open: func(_ context.Context, env tools.Env) (tools.Opened, error) {
			m := NewManager(Config{Dir: env.Dir.Base(), PackageIndex: env.Executor.PackageIndex})
			env.Dir.Follow(m.Dir)
			return tools.Opened{Tools: m.Tools(), Close: m.Close}, nil
		},
	}
}
