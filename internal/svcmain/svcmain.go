// Package svcmain holds what the control plane's service commands share:
// running until SIGINT or SIGTERM with a JSON log, and connecting to NATS
// as the environment says (sandox-data, sandox-search, sandox-dashboard),
// and flags whose defaults come from the environment (sandox-orchestrator,
// sandox-nats, sandox-dashboard).
package svcmain

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

// Main runs run until it returns or the process is told to stop, and
// exits 1, logging "<what> stopped", when run fails.
func Main(what string, run func(ctx context.Context, log *slog.Logger) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	err := run(ctx, log)
	stop()
	if err != nil {
		log.Error(what+" stopped", "err", err)
		os.Exit(1)
	}
}

// Connect connects to NATS at SANDOX_NATS_URL (default
// nats://127.0.0.1:4222) with the credentials file SANDOX_NATS_CREDS, if
// set, as name, retrying the first connection and reconnecting for ever.
func Connect(name string) (*nats.Conn, error) {
	url := os.Getenv("SANDOX_NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	opts := []nats.Option{nats.Name(name), nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1), nats.ReconnectWait(500 * time.Millisecond)}
	if creds := os.Getenv("SANDOX_NATS_CREDS"); creds != "" {
		opts = append(opts, nats.UserCredentials(creds))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", url, err)
	}
	return nc, nil
}
