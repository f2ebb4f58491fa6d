package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/dashboard"
	"github.com/sandox/sandox/services/mcp"
)

// envDashboardToken names the variable that may hold the dashboard's token.
const envDashboardToken = "SANDOX_DASHBOARD_TOKEN"

// defaultDashboardAddr is where `sandox dashboard` listens unless told.
const defaultDashboardAddr = "127.0.0.1:8089"

// Where the dashboard's container (`sandox up`) gets its NATS credentials
// and its token, and the host port it is published on, on 127.0.0.1.
const (
	dashboardCredsDir  = "/etc/sandox-dashboard"
	dashboardCredsFile = dashboardCredsDir + "/nats.creds"
	dashboardTokenFile = dashboardCredsDir + "/token"
	dashboardPort      = "8089"
	// dashboardTokenLabel holds a digest of the token the container got,
	// so that a new token recreates it.
	dashboardTokenLabel = "dev.sandox.dashboard-token"
)

// dashboardURL is the address of the dashboard `sandox up` runs, with its
// token: opening it once sets the cookie that stands for it.
func dashboardURL(token string) string {
	return "http://127.0.0.1:" + dashboardPort + "/?token=" + token
}

// tokenDigest is a digest of token that tells tokens apart without
// revealing them (a label of the container).
func tokenDigest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:8])
}

// serveDashboard serves the web dashboard (services/dashboard) until ctx
// is done: sandox dashboard [-addr A] [-nats URL] [-role R] [-creds F]
// [-token-file F].
func serveDashboard(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("dashboard", flag.ContinueOnError)
	addr := fs.String("addr", defaultDashboardAddr, "address to serve on; a non-loopback address needs a token")
	url := fs.String("nats", localNATSURL, "NATS URL")
	role := fs.String("role", string(auth.RoleClient), "the identity minted for the dashboard: client (reads everything and asks for live use), audit (read-only: no live use) or control")
	credsFile := fs.String("creds", "", "connect with these credentials instead of minting an identity")
	tokenFile := fs.String("token-file", "", "require the token in this file (made on first use); default: none on loopback, ~/.config/sandox/dashboard.token otherwise; $"+envDashboardToken+" wins")
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
	token, err := dashboardToken(*addr, *tokenFile)
	if err != nil {
		return err
	}
	// The dashboard starts even when NATS is down, and says so on its
	// pages until NATS is back.
	nc, err := nats.Connect(*url, opt, nats.Name("sandox-dashboard"), nats.Timeout(2*time.Second),
		nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("NATS at %s: %w", *url, err)
	}
	defer nc.Close()
	exp, waitMetrics, err := startMetrics(ctx, nc, noUsage, *otlpEndpoint, *otlpInterval, log)
	if err != nil {
		return err
	}
	defer waitMetrics()
	srv, err := dashboard.New(nc, dashboard.Options{Token: token, NoUsage: noUsage, Metrics: exp.Handler(), Logger: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		if *addr == defaultDashboardAddr {
			return fmt.Errorf("dashboard: %w (`sandox up`'s dashboard is published there: open the address it printed, or give -addr)", err)
		}
		return fmt.Errorf("dashboard: %w", err)
	}
	page := "http://" + ln.Addr().String() + "/"
	if token != "" {
		page += "?token=" + token
	}
	fmt.Fprintf(os.Stderr, "sandox dashboard of %s at %s, metrics at http://%s/metrics (Ctrl-C stops it)\n", *url, page, ln.Addr())
	return srv.Serve(ctx, ln)
}

// dashboardIdentity returns how the dashboard authenticates to NATS, and
// whether its credentials may not ask for live use (audit). With credsFile
// it uses that file; otherwise it mints an identity of role, named
// "dashboard", from the authority `sandox up` made, or, without one, uses
// the client's default credentials.
func dashboardIdentity(role auth.Role, credsFile string) (nats.Option, bool, error) {
	if credsFile != "" {
		data, err := os.ReadFile(credsFile)
		if err != nil {
			return nil, false, err
		}
		c, err := auth.ParseCreds(data)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", credsFile, err)
		}
		return c.Option(), auth.Current(c, auth.RoleAudit), nil
	}
	switch role {
	case auth.RoleClient, auth.RoleAudit, auth.RoleControl:
	default:
		return nil, false, fmt.Errorf("-role %s: want client, audit or control", role)
	}
	dir, err := sdk.ConfigDir()
	if err != nil {
		return nil, false, err
	}
	a, err := auth.LoadAuthority(filepath.Join(dir, "authority"))
	if err != nil {
		if f := sdk.DefaultCredentials(); f != "" {
			return nats.UserCredentials(f), false, nil
		}
		return nil, false, fmt.Errorf("no credentials for the dashboard: %w (run `sandox up`, or give -creds)", err)
	}
	c, err := a.Mint("dashboard", role, "")
	if err != nil {
		return nil, false, err
	}
	return c.Option(), role == auth.RoleAudit, nil
}

// dashboardToken returns the token the dashboard wants, "" for none: the
// one in $SANDOX_DASHBOARD_TOKEN, else the one in tokenFile, else none on a
// loopback address and the one in ~/.config/sandox/dashboard.token (made
// on first use) on any other.
func dashboardToken(addr, tokenFile string) (string, error) {
	return serverToken(addr, tokenFile, os.Getenv(envDashboardToken), "dashboard.token")
}

// serverToken returns the token an HTTP server of the CLI wants, "" for
// none: fromEnv (its variable's value) when set, else the one in
// tokenFile, else none on a loopback address and the one in the config
// directory's file name (made on first use) on any other.
func serverToken(addr, tokenFile, fromEnv, name string) (string, error) {
	if fromEnv != "" {
		return fromEnv, nil
	}
	if tokenFile == "" && loopbackAddr(addr) {
		return "", nil
	}
	if tokenFile == "" {
		dir, err := sdk.ConfigDir()
		if err != nil {
			return "", err
		}
		tokenFile = filepath.Join(dir, name)
	}
	token, _, err := mcp.LoadOrCreateToken(tokenFile)
	return token, err
}

// storedDashboardToken returns the token in
// ~/.config/sandox/dashboard.token, made on first use: the one `sandox
// dashboard` wants off loopback, and the one `sandox up` and `sandox
// secrets` give the dashboard's container.
func storedDashboardToken() (string, error) {
	dir, err := sdk.ConfigDir()
	if err != nil {
		return "", err
	}
	token, _, err := mcp.LoadOrCreateToken(filepath.Join(dir, "dashboard.token"))
	return token, err
}
