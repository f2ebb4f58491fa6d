package natstest

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
)

// TestStart starts a server with a changed configuration, connects, and
// uses JetStream on it.
func TestStart(t *testing.T) {
	s := Start(t, func(c *natsd.Config) { c.ServerName = "natstest" })
	if got := s.Name(); got != "natstest" {
		t.Errorf("got server name %q, want natstest", got)
	}
	nc := Connect(t, s)
	js := JetStream(t, nc)
	if _, err := js.AccountInfo(t.Context()); err != nil {
		t.Errorf("JetStream does not answer: %v", err)
	}
}

// TestRestart restarts a server on its port and store: a stream made
// before is there after, and a client that kept its connection reconnects.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	s := Start(t, StoreDir(dir))
	nc := Connect(t, s, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	js := JetStream(t, nc)
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "KEPT", Subjects: []string{"kept"}}); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	s = Restart(t, s, StoreDir(dir))
	poll.Until(t, 10*time.Second, "the client to reconnect", nc.IsConnected)
	if _, err := js.Stream(t.Context(), "KEPT"); err != nil {
		t.Errorf("got %v after the restart, want the stream kept", err)
	}
}

// TestAuth starts a server under an authority: a connection without
// credentials is refused, one with credentials it signed is not.
func TestAuth(t *testing.T) {
	a, err := auth.NewAuthority()
	if err != nil {
		t.Fatal(err)
	}
	s := Start(t, Auth(a))
	if _, err := nats.Connect(s.ClientURL(), nats.NoReconnect()); !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("got %v without credentials, want %v", err, nats.ErrAuthorization)
	}
	creds, err := a.Mint("natstest", auth.RoleClient, "")
	if err != nil {
		t.Fatal(err)
	}
	Connect(t, s, creds.Option())
}
