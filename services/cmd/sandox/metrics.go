package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/dashboard"
	"github.com/sandox/sandox/services/metrics"
)

// envOTLPEndpoint names the variable that may hold the OTLP/HTTP receiver
// the metrics are pushed to.
const envOTLPEndpoint = "SANDOX_OTLP_ENDPOINT"

// envMetricsToken names the variable that may hold `sandox metrics`'s
// token.
const envMetricsToken = "SANDOX_METRICS_TOKEN"

// defaultMetricsAddr is where `sandox metrics` listens unless told: the
// port commonly given to exporters of this kind.
const defaultMetricsAddr = "127.0.0.1:9464"

// startMetrics starts the metrics exporter of the system nc reaches, and
// its OTLP push every interval when endpoint, or else $SANDOX_OTLP_ENDPOINT,
// is set; both run until ctx is done. wait waits for them to stop. It
// fails for a bad OTLP endpoint. noUsage says nc may not ask for the
// sandboxes' live use (audit credentials).
func startMetrics(ctx context.Context, nc *nats.Conn, noUsage bool, endpoint string, interval time.Duration, log *slog.Logger) (exp *metrics.Exporter, wait func(), err error) {
	exp, err = metrics.New(nc, metrics.Options{NoUsage: noUsage, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	if endpoint == "" {
		endpoint = os.Getenv(envOTLPEndpoint)
	}
	push := metrics.OTLPOptions{Endpoint: endpoint, Interval: interval}
	if endpoint != "" {
		if err := metrics.CheckOTLP(push); err != nil {
			return nil, nil, err
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { exp.Run(ctx) })
	if endpoint != "" {
		wg.Go(func() {
			if err := metrics.PushOTLP(ctx, exp.Gatherer(), push); err != nil {
				log.Error("OTLP push", "err", err)
			}
		})
		fmt.Fprintf(os.Stderr, "pushing metrics to %s every %s\n", endpoint, push.Interval)
	}
	return exp, wg.Wait, nil
}

// serveMetrics serves the Prometheus metrics (services/metrics) until ctx
// is done: sandox metrics [-addr A] [-nats URL] [-role R] [-creds F]
// [-token-file F] [-otlp-endpoint URL] [-otlp-interval D].
func serveMetrics(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("metrics", flag.ContinueOnError)
	addr := fs.String("addr", defaultMetricsAddr, "address to serve /metrics on; a non-loopback address needs a token")
	url := fs.String("nats", localNATSURL, "NATS URL")
	role := fs.String("role", string(auth.RoleAudit), "the identity minted for the exporter: audit (read-only: no live use of sandboxes), client (reads their live use too) or control")
	credsFile := fs.String("creds", "", "connect with these credentials instead of minting an identity")
	tokenFile := fs.String("token-file", "", "require the token in this file (made on first use); default: none on loopback, ~/.config/sandox/metrics.token otherwise; $"+envMetricsToken+" wins")
	otlpEndpoint := fs.String("otlp-endpoint", "", "also push the metrics over OTLP/HTTP to this receiver (http://HOST:4318, or a full URL); $SANDOX_OTLP_ENDPOINT when not given; none by default")
	otlpInterval := fs.Duration("otlp-interval", 30*time.Second, "time between two OTLP pushes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opt, noUsage, err := dashboardIdentity(auth.Role(*role), *credsFile)
	if err != nil {
		return err
	}
	token, err := serverToken(*addr, *tokenFile, os.Getenv(envMetricsToken), "metrics.token")
	if err != nil {
		return err
	}
	nc, err := nats.Connect(*url, opt, nats.Name("sandox-metrics"), nats.Timeout(2*time.Second),
		nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("NATS at %s: %w", *url, err)
	}
	defer nc.Close()
	exp, wait, err := startMetrics(ctx, nc, noUsage, *otlpEndpoint, *otlpInterval, log)
	if err != nil {
		return err
	}
	defer wait()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", exp.Handler())
	hs := &http.Server{Handler: dashboard.Guard(mux, token), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shut)
	}()
	fmt.Fprintf(os.Stderr, "sandox metrics of %s at http://%s/metrics (Ctrl-C stops it)\n", *url, ln.Addr())
	if err = hs.Serve(ln); errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
