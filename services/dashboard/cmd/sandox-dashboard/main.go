// Command sandox-dashboard is the control plane's web dashboard
// (services/dashboard) as a service: `sandox up` runs it in the container
// sandox-dashboard, published on 127.0.0.1:8089 of the host, and it is
// what `sandox dashboard` serves, without the CLI's identity minting.
//
// It connects to NATS at SANDOX_NATS_URL (default nats://127.0.0.1:4222)
// with the credentials file SANDOX_NATS_CREDS; audit credentials are
// recognised, and the pages then show no live use. It wants the token in
// $SANDOX_DASHBOARD_TOKEN, else in -token-file; on an address that is not
// loopback it refuses to start without one. It serves the Prometheus
// metrics (services/metrics) at /metrics behind the same guard, and pushes
// them over OTLP/HTTP when -otlp-endpoint is set (docs/metrics.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sandox/sandox/internal/svcmain"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/dashboard"
	"github.com/sandox/sandox/services/metrics"
)

func main() {
	svcmain.Main("dashboard", func(ctx context.Context, log *slog.Logger) error {
		return run(ctx, os.Args[1:], log)
	})
}

// run serves the dashboard until ctx is done.
func run(ctx context.Context, args []string, log *slog.Logger) error {
	fs := flag.NewFlagSet("sandox-dashboard", flag.ContinueOnError)
	addr := fs.String("addr", "0.0.0.0:8089", "address to serve on; one that is not loopback wants a token (env SANDOX_DASHBOARD_ADDR)")
	tokenFile := fs.String("token-file", "", "file holding the token the pages want; $SANDOX_DASHBOARD_TOKEN wins (env SANDOX_DASHBOARD_TOKEN_FILE)")
	otlpEndpoint := fs.String("otlp-endpoint", "", "also push the metrics over OTLP/HTTP to this receiver (http://HOST:4318, or a full URL); none when empty (env SANDOX_OTLP_ENDPOINT)")
	otlpInterval := fs.Duration("otlp-interval", 30*time.Second, "time between two OTLP pushes (env SANDOX_OTLP_INTERVAL)")
	if err := svcmain.EnvDefaults(fs, os.Getenv); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	token, err := readToken(os.Getenv("SANDOX_DASHBOARD_TOKEN"), *tokenFile)
	if err != nil {
		return err
	}
	noUsage, err := auditCreds(os.Getenv("SANDOX_NATS_CREDS"))
	if err != nil {
		return err
	}
	// The dashboard starts even when NATS is down, and says so on its
	// pages until NATS is back.
	nc, err := svcmain.Connect("sandox-dashboard")
	if err != nil {
		return err
	}
	defer nc.Close()
	exp, err := metrics.New(nc, metrics.Options{NoUsage: noUsage, Logger: log})
	if err != nil {
		return err
	}
	push := metrics.OTLPOptions{Endpoint: *otlpEndpoint, Interval: *otlpInterval}
	if push.Endpoint != "" {
		if err := metrics.CheckOTLP(push); err != nil {
			return err
		}
	}
	srv, err := dashboard.New(nc, dashboard.Options{Token: token, NoUsage: noUsage, Metrics: exp.Handler(), Logger: log})
	if err != nil {
		return err
	}
	// The exporter and its push stop with the dashboard: cancel runs
	// before the wait.
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() { exp.Run(ctx) })
	if push.Endpoint != "" {
		wg.Go(func() {
			if err := metrics.PushOTLP(ctx, exp.Gatherer(), push); err != nil {
				log.Error("OTLP push", "err", err)
			}
		})
	}
	return srv.ListenAndServe(ctx, *addr)
}

// readToken returns the token: env when set, else the content of file
// (trimmed), else "" for none.
func readToken(env, file string) (string, error) {
	if env != "" {
		return env, nil
	}
	if file == "" {
		return "", nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("dashboard token: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", errors.New("dashboard token: " + file + " is empty")
	}
	return token, nil
}

// auditCreds reports whether the credentials file holds the audit role,
// which may not ask for a sandbox's live use; false without a file.
func auditCreds(file string) (bool, error) {
	if file == "" {
		return false, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return false, fmt.Errorf("NATS credentials: %w", err)
	}
	c, err := auth.ParseCreds(data)
	if err != nil {
		return false, fmt.Errorf("%s: %w", file, err)
	}
	return auth.Current(c, auth.RoleAudit), nil
}
