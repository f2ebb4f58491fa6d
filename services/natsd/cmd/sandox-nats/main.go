// Command sandox-nats runs the NATS server with JetStream that the sandox
// components talk through.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sandox/sandox/internal/svcmain"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sandox-nats:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cfg := natsd.DefaultConfig()
	fs := flag.NewFlagSet("sandox-nats", flag.ContinueOnError)
	fs.StringVar(&cfg.Host, "host", "0.0.0.0", "address to listen on (env SANDOX_NATSD_HOST)")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "client port (env SANDOX_NATSD_PORT)")
	fs.StringVar(&cfg.StoreDir, "store", cfg.StoreDir, "JetStream store directory (env SANDOX_NATSD_STORE)")
	fs.BoolVar(&cfg.Debug, "debug", false, "log the server's own messages (env SANDOX_NATSD_DEBUG)")
	authDir := fs.String("auth", "/etc/sandox-auth", "directory of the NATS authority's seeds, where sandox up puts them (env SANDOX_NATSD_AUTH)")
	fs.StringVar(&cfg.Socket, "socket", "", "also serve clients on this Unix socket: sandboxes, which have no network, reach NATS there (env SANDOX_NATSD_SOCKET)")
	fs.StringVar(&cfg.TLS.Cert, "tls-cert", "", "PEM server certificate: clients must connect with TLS (env SANDOX_NATSD_TLS_CERT)")
	fs.StringVar(&cfg.TLS.Key, "tls-key", "", "PEM key of -tls-cert (env SANDOX_NATSD_TLS_KEY)")
	fs.StringVar(&cfg.TLS.ClientCA, "tls-client-ca", "", "PEM CA that must sign client certificates, for mutual TLS (env SANDOX_NATSD_TLS_CLIENT_CA)")
	fs.StringVar(&cfg.ServerName, "name", cfg.ServerName, "server name, unique in a cluster (env SANDOX_NATSD_NAME)")
	fs.StringVar(&cfg.Cluster.Name, "cluster-name", "sandox", "cluster name, with -cluster-port (env SANDOX_NATSD_CLUSTER_NAME)")
	fs.StringVar(&cfg.Cluster.Host, "cluster-host", "0.0.0.0", "address to listen on for routes (env SANDOX_NATSD_CLUSTER_HOST)")
	fs.IntVar(&cfg.Cluster.Port, "cluster-port", 0, "route port; set to run as a node of a cluster (env SANDOX_NATSD_CLUSTER_PORT)")
	routes := fs.String("routes", "", "comma-separated routes to the other nodes, nats-route://host:port (env SANDOX_NATSD_ROUTES)")
	// Every flag takes its default from the variable its usage names, so
	// that a container's environment reaches each setting.
	if err := svcmain.EnvDefaults(fs, os.Getenv); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *routes != "" {
		cfg.Cluster.Routes = strings.Split(*routes, ",")
	}
	// Never open: without an authority the server does not start.
	a, err := auth.LoadAuthority(*authDir)
	if err != nil {
		return err
	}
	cfg.Auth = a
	cfg.Log = slog.Default()
	s, err := natsd.Start(cfg)
	if err != nil {
		return err
	}
	slog.Info("nats ready", "url", s.ClientURL(), "store", cfg.StoreDir)
	<-ctx.Done()
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}
