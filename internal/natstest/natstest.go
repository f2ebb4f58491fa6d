// Package natstest starts the embedded NATS servers of tests: sandox's own
// server (natsd) with JetStream, on a free loopback port, with its store in
// a temporary directory, stopped when the test ends.
package natstest

import (
	"net"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
)

// Option changes a server's configuration before it starts.
type Option func(*natsd.Config)

// Auth puts the server in operator mode under authority a: every
// connection must present credentials a signed.
func Auth(a *auth.Authority) Option { return func(c *natsd.Config) { c.Auth = a } }

// StoreDir keeps JetStream's data (and the auth service's state) in dir
// instead of a new temporary directory, so that it outlives a Restart.
func StoreDir(dir string) Option { return func(c *natsd.Config) { c.StoreDir = dir } }

// Port listens on port instead of a free one.
func Port(port int) Option { return func(c *natsd.Config) { c.Port = port } }

// Start starts a natsd server for the test and returns it; opts change
// its configuration before it starts (an auth authority, a cluster, a
// socket). It fails the test when the server does not start, and shuts it
// down, waiting for it, when the test ends.
func Start(t testing.TB, opts ...Option) *server.Server {
	t.Helper()
	cfg := natsd.DefaultConfig()
	cfg.Host, cfg.Port, cfg.StoreDir = "127.0.0.1", -1, t.TempDir()
	for _, o := range opts {
		o(&cfg)
	}
	s, err := natsd.Start(cfg)
	if err != nil {
		t.Fatalf("start NATS: %v", err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// Restart shuts s down, waits for it, and starts a server again on s's
// port with opts, as Start does: its clients reconnect to it. Pass the
// StoreDir that s was started with for its streams, buckets and
// revocations to outlive the restart.
func Restart(t testing.TB, s *server.Server, opts ...Option) *server.Server {
	t.Helper()
	port := s.Addr().(*net.TCPAddr).Port
	s.Shutdown()
	s.WaitForShutdown()
	return Start(t, append([]Option{Port(port)}, opts...)...)
}

// Connect connects to s with opts, and closes the connection when the
// test ends.
func Connect(t testing.TB, s *server.Server, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatalf("connect to NATS: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// JetStream returns the JetStream context of nc, failing the test when it
// cannot be made.
func JetStream(t testing.TB, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return js
}
