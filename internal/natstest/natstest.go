// Package natstest starts the embedded NATS servers of tests: sandox's own
// server (natsd) with JetStream, on a free loopback port, with its store in
// a temporary directory, stopped when the test ends.
package natstest

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/services/natsd"
)

// Start starts a natsd server for the test and returns it; opts change
// its configuration before it starts (an auth authority, a cluster, a
// socket). It fails the test when the server does not start, and shuts it
// down, waiting for it, when the test ends.
func Start(t testing.TB, opts ...func(*natsd.Config)) *server.Server {
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
