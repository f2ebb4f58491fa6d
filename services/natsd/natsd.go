// Package natsd runs the NATS server sandox uses, with JetStream, embedded
// in a Go process: the sandox-nats container runs it, and tests start one on
// a free port with a temporary store.
package natsd

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/sandox/sandox/services/auth"
)

// Config is the server's configuration.
type Config struct {
	// Host and Port to listen on for clients. Port -1 picks a free port.
	Host string
	Port int
	// StoreDir holds JetStream's data.
	StoreDir string
	// MaxPayload bounds one message, in bytes. Tool files travel inside
	// lifecycle commands, so the default is larger than NATS's 1 MiB.
	MaxPayload int32
	// ServerName names the server in logs and cluster views.
	ServerName string
	// Debug turns on the server's own logging to stderr.
	Debug bool
	// Auth, when set, puts the server in operator mode under this
	// authority: every connection must present credentials it signed, and
	// the auth service answers the control plane (see package auth). nil
	// leaves the server open, which only tests of other parts should do.
	Auth *auth.Authority
	// AuthState is the auth service's state file; "" means auth.json in
	// StoreDir.
	AuthState string
	// Socket, when set, is the path of a Unix socket that also serves
	// clients: the only way a sandbox, which has no network, reaches NATS.
	Socket string
	// TLS, when its Cert is set, makes clients connect with TLS.
	TLS TLSConfig
	// Log receives the auth service's messages; nil discards them.
	Log *slog.Logger
	// Cluster, when its Port is set, makes the server a cluster node.
	// ServerName must then be unique in the cluster.
	Cluster Cluster
}

// DefaultConfig returns the configuration of a local development server.
func DefaultConfig() Config {
	return Config{
		Host:       "127.0.0.1",
		Port:       4222,
		StoreDir:   "/var/lib/sandox/nats",
		MaxPayload: 8 << 20,
		ServerName: "sandox-nats",
	}
}

// Start starts a server and waits until it accepts connections. The caller
// owns the server: Shutdown and WaitForShutdown stop it.
func Start(cfg Config) (*server.Server, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("natsd: no store directory")
	}
	opts := &server.Options{
		ServerName: cfg.ServerName,
		Host:       cfg.Host,
		Port:       cfg.Port,
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		MaxPayload: cfg.MaxPayload,
		NoSigs:     true,
		NoLog:      !cfg.Debug,
	}
	if err := cfg.Cluster.apply(opts); err != nil {
		return nil, fmt.Errorf("natsd: %w", err)
	}
	if err := cfg.TLS.apply(opts); err != nil {
		return nil, fmt.Errorf("natsd: %w", err)
	}
	var svc *auth.Service
	if cfg.Auth != nil {
		log := cfg.Log
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		state := cfg.AuthState
		if state == "" {
			state = filepath.Join(cfg.StoreDir, "auth.json")
		}
		if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
			return nil, fmt.Errorf("natsd: %w", err)
		}
		var err error
		if svc, err = auth.NewService(cfg.Auth, state, log); err != nil {
			return nil, fmt.Errorf("natsd: %w", err)
		}
		if err := svc.Configure(opts); err != nil {
			return nil, fmt.Errorf("natsd: %w", err)
		}
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsd: %w", err)
	}
	refusals := installRefusals(s, cfg)
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, errors.New("natsd: server not ready for connections within 10s")
	}
	if cfg.Socket != "" {
		if err := serveSocket(s, cfg.Socket); err != nil {
			s.Shutdown()
			return nil, fmt.Errorf("natsd: %w", err)
		}
	}
	if svc != nil {
		if err := svc.Start(s); err != nil {
			s.Shutdown()
			return nil, fmt.Errorf("natsd: %w", err)
		}
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := refusals.record(s, cfg, log); err != nil {
		s.Shutdown()
		return nil, fmt.Errorf("natsd: %w", err)
	}
	return s, nil
}
