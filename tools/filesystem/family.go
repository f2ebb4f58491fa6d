package filesystem

import (
	"context"

	"github.com/sandox/sandox/tools"
)

// Open builds the filesystem_tools family in the executor (package
// builtin maps the family's name to it). Its tools resolve relative paths
// against the shared working directory, so they follow the terminal's cd
// when terminal_tools is there too. Its file watches publish through
// env.Publish under the sandbox's id as env.Sandbox reports it when each
// watch starts, and watch only inside the workspace; closing the family
// stops them.
func Open(_ context.Context, env tools.Env) (tools.Opened, error) {
	cfg := Config{Dir: env.Dir.Get}
	watchTools, closeWatches := WatchTools(cfg, WatchConfig{Publish: env.Publish, SandboxID: env.Sandbox,
		Root: env.Executor.Workspace, Budget: env.Budget})
	return tools.Opened{Tools: append(Tools(cfg), watchTools...), Close: closeWatches}, nil
}
