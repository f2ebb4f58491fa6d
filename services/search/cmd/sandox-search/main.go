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
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/services/search"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(ctx, log); err != nil {
		log.Error("search service stopped", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger) error {
	cfg, err := search.FromEnv(os.Getenv, os.ReadFile)
	if err != nil {
		return err
	}
	url := os.Getenv("SANDOX_NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	opts := []nats.Option{nats.Name("sandox-search"), nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1), nats.ReconnectWait(500 * time.Millisecond)}
	if creds := os.Getenv("SANDOX_NATS_CREDS"); creds != "" {
		opts = append(opts, nats.UserCredentials(creds))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return fmt.Errorf("connect to NATS at %s: %w", url, err)
	}
	defer nc.Close()
	return search.New(cfg, log).Serve(ctx, nc)
}
