// Package natsd runs the NATS server sandox uses, with JetStream, embedded
// in a Go process: the sandox-nats container runs it, and tests start one on
// a free port with a temporary store.
package natsd

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
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
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsd: %w", err)
	}
	if cfg.Debug {
		s.ConfigureLogger()
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, errors.New("natsd: server not ready for connections within 10s")
	}
	return s, nil
}
