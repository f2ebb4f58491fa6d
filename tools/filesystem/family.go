package filesystem

import (
	"context"

	"github.com/sandox/sandox/tools"
)

// Open builds the filesystem_tools family in the executor (package
// builtin maps the family's name to it). Its tools resolve relative paths
// against the shared working directory, so they follow the terminal's cd
// when terminal_tools is there too. It has nothing to close.
func Open(_ context.Context, env tools.Env) (tools.Opened, error) {
	return tools.Opened{Tools: Tools(Config{Dir: env.Dir.Get})}, nil
}
