package natstest

import (
	"testing"

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
