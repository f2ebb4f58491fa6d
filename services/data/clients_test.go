package data

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conn stands for a database client: the cache's logic does not depend on
// what the client is.
type conn struct {
	addr   string
	n      int
	closed bool
}

func TestClientsFollowTheGroupAtAnAddress(t *testing.T) {
	opened := 0
	c := newClients(func(_ context.Context, addr string) (*conn, error) {
		if addr == "bad:1" {
			return nil, errors.New("connection refused")
		}
		opened++
		return &conn{addr: addr, n: opened}, nil
	}, func(x *conn) { x.closed = true })
	ctx := context.Background()

	a1, err := c.get(ctx, "g1", "10.0.0.5:6334")
	require.NoError(t, err)
	again, err := c.get(ctx, "g1", "10.0.0.5:6334")
	require.NoError(t, err)
	assert.Same(t, a1, again, "the same group's database: one client")

	// g1 ended; g2's database got the same address: a new client, and the
	// old one, which knew g1's collections, is closed.
	b, err := c.get(ctx, "g2", "10.0.0.5:6334")
	require.NoError(t, err)
	assert.NotSame(t, a1, b)
	assert.True(t, a1.closed, "got the old client open, want it closed")
	assert.False(t, b.closed)
	assert.Len(t, c.byAddr, 1, "one client per live address")

	_, err = c.get(ctx, "g3", "bad:1")
	require.Error(t, err)
	assert.Len(t, c.byAddr, 1, "a failed connection is not cached")

	c.closeAll()
	assert.True(t, b.closed)
	assert.Empty(t, c.byAddr)
}
