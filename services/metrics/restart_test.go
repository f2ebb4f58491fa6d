package metrics

import (
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
)

// TestNATSRestart stops the NATS server under a running exporter and
// starts it again on the same port and store: while it is down
// sandox_up{source="audit_stream"} is 0 and the counters stand still; once
// it is back the exporter reads the stream again from its start and counts
// only the new entries, none twice.
func TestNATSRestart(t *testing.T) {
	store := t.TempDir()
	ns := natstest.Start(t, natstest.StoreDir(store))
	nc := natstest.Connect(t, ns, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	js := natstest.JetStream(t, nc)
	_, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: schemas.EventStream, Subjects: schemas.EventSubjects(), Storage: jetstream.FileStorage})
	require.NoError(t, err)
	s := &system{nc: nc, js: js}
	s.exp = s.run(t)
	started := func(sb string) uint64 {
		return s.record(t, schemas.SandboxEventSubject(sb), schemas.Event{Kind: schemas.EventStarted, GroupID: "g", SandboxID: sb})
	}
	count := func() float64 {
		return gather(t, s.exp.Gatherer(), "sandox_sandbox_events_total", "kind", "started").value
	}
	up := func() float64 {
		return gather(t, s.exp.Gatherer(), "sandox_up", "source", "audit_stream").value
	}
	started("sb-1")
	waitSeq(t, s.exp, started("sb-2"))
	require.Equal(t, 2.0, count())

	port := ns.Addr().(*net.TCPAddr).Port
	ns.Shutdown()
	ns.WaitForShutdown()
	poll.Until(t, 20*time.Second, "sandox_up to say the stream cannot be read", func() bool { return up() == 0 })
	assert.Equal(t, 2.0, count(), "the counters stand still while NATS is down")

	natstest.Start(t, natstest.StoreDir(store), natstest.Port(port))
	poll.Until(t, 20*time.Second, "the client to reconnect", nc.IsConnected)
	waitSeq(t, s.exp, started("sb-3"))
	poll.Until(t, 20*time.Second, "sandox_up to say the stream is read again", func() bool { return up() == 1 })
	assert.Equal(t, 3.0, count(), "the entries before the restart are not counted again")
}
