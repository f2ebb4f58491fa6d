package web

import (
	"context"

	"github.com/sandox/sandox/tools"
)

// Open builds the web_tools family in the executor (package builtin maps
// the family's name to it; its image needs, Chromium and fonts for the
// browser tools, are in package catalog). The browser starts on the first
// browser call and closing the family ends it. web_search is forwarded
// over the executor's NATS connection to the control plane's search
// service, which holds the API keys.
func Open(_ context.Context, env tools.Env) (tools.Opened, error) {
	cfg := Config{Workspace: env.Dir.Base(), Logger: env.Log}
	if env.Request != nil {
		cfg.Search = NewRequestSearcher(env.Executor.SandboxID, env.Request)
	}
	w := New(cfg)
	return tools.Opened{Tools: w.Tools(), Close: w.Close}, nil
}
