// Command sandox-search is the control plane's web search service: it
// answers sandboxes' web_tools.web_search requests on NATS with the
// operator's search provider keys, which it reads from its environment
// (see services/search.FromEnv) and which never reach a sandbox.
//
// It reads SANDOX_NATS_URL (default nats://127.0.0.1:4222) and
// SANDOX_NATS_CREDS.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/sandox/sandox/internal/svcmain"
	"github.com/sandox/sandox/services/search"
)

func main() { svcmain.Main("search service", run) }

func run(ctx context.Context, log *slog.Logger) error {
	cfg, err := search.FromEnv(os.Getenv, os.ReadFile)
	if err != nil {
		return err
	}
	nc, err := svcmain.Connect("sandox-search")
	if err != nil {
		return err
	}
	defer nc.Close()
	return search.New(cfg, log).Serve(ctx, nc)
}
