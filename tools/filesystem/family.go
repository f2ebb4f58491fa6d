package filesystem

import (
	"context"

	"github.com/sandox/sandox/tools"
)

// Family returns the filesystem_tools family for the module list (package
// builtin). Its tools resolve relative paths against the shared working
// directory, so they follow the terminal's cd when terminal_tools is there
// too. It needs nothing beyond the default sandbox image and has nothing to
// close.
func Family() tools.Module {
	return tools.Module{
		Name:    Module,
		Summary: "read, write, edit, move, copy, delete, list, find and search files in the workspace",
		Open: func(_ context.Context, env tools.Env) (tools.Opened, error) {
			return tools.Opened{Tools: Tools(Config{Dir: env.Dir.Get})}, nil
		},
	}
}
