package terminal

import (
	"context"

	"github.com/sandox/sandox/tools"
)

// Open builds the terminal_tools family in the executor (package builtin
// maps the family's name to it). Its sessions start in the workspace, and
// the shared working directory follows the default session's cd; closing
// it kills every session and every job. Its jobs publish through
// env.Publish under the sandbox's id as env.Sandbox reports it when each
// job starts.
func Open(_ context.Context, env tools.Env) (tools.Opened, error) {
	m := NewManager(Config{Dir: env.Dir.Base(), PackageIndex: env.Executor.PackageIndex,
		Jobs: JobConfig{Publish: env.Publish, SandboxID: env.Sandbox, Budget: env.Budget, Webhooks: env.Executor.Webhooks}})
	env.Dir.Follow(m.Dir)
	return tools.Opened{Tools: m.Tools(), Close: m.Close}, nil
}
