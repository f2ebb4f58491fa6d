package natsd_test

import (
	"errors"
	"io"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
)

type unixDialer struct{ path string }

func (d unixDialer) Dial(_, _ string) (net.Conn, error) { return net.Dial("unix", d.path) }

func TestSocketServesClientsWithCredentials(t *testing.T) {
	a, err := auth.NewAuthority()
	require.NoError(t, err)
	socket := filepath.Join(t.TempDir(), "nats.sock")
	s := natstest.Start(t, natstest.Auth(a), func(c *natsd.Config) { c.Socket = socket })
	dial := nats.SetCustomDialer(unixDialer{socket})

	t.Run("without credentials refused", func(t *testing.T) {
		_, err := nats.Connect("nats://socket:4222", dial, nats.NoReconnect())
		require.Error(t, err)
		// The server answers -ERR 'Authorization Violation' and closes the
		// socket; a client still writing its handshake may see the close
		// first.
		refused := errors.Is(err, nats.ErrAuthorization) || errors.Is(err, syscall.EPIPE) ||
			errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)
		assert.True(t, refused, "want a refusal, got %v", err)
	})
	t.Run("a sandbox answers a client over it", func(t *testing.T) {
		sbCreds, err := a.MintSandbox("sb-1", true) // valid on the socket alone
		require.NoError(t, err)
		sb, err := nats.Connect("nats://socket:4222", dial, sbCreds.Option())
		require.NoError(t, err)
		defer sb.Close()
		_, err = sb.Subscribe("sandbox.sb-1.ping", func(m *nats.Msg) { _ = m.Respond([]byte("pong")) })
		require.NoError(t, err)
		require.NoError(t, sb.Flush())

		cl, err := a.Mint("client", auth.RoleClient, "")
		require.NoError(t, err)
		nc, err := nats.Connect(s.ClientURL(), cl.Option())
		require.NoError(t, err)
		defer nc.Close()
		m, err := nc.Request("sandbox.sb-1.ping", nil, 2*time.Second)
		require.NoError(t, err)
		assert.Equal(t, "pong", string(m.Data))
	})
}
