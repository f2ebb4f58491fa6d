package web

import (
	"context"

	"github.com/sandox/sandox/tools"
)

// Family returns the web_tools family for the module list (package
// builtin). Its image needs Chromium and fonts for the browser tools; the
// browser starts on the first browser call and closing the family ends it.
// web_search is forwarded over the executor's NATS connection to the
// control plane's search service, which holds the API keys.
func Family() tools.Module {
	return tools.Module{
		Name:    Module,
		Summary: "scrape a site to markdown, web search, browser automation",
		Image:   tools.ImageNeeds{Apt: []string{"chromium", "fonts-liberation"}},
		Open: func(_ context.Context, env tools.Env) (tools.Opened, error) {
			cfg := Config{Workspace: env.Dir.Base(), Logger: env.Log}
			if env.Request != nil {
				cfg.Search = NewRequestSearcher(env.Executor.SandboxID, env.Request)
			}
			w := New(cfg)
			return tools.Opened{Tools: w.Tools(), Close: w.Close}, nil
		},
	}
}
