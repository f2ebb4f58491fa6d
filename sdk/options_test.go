package sdk_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/sdk"
)

// TestWithURLServerList checks that WithURL takes the servers of a cluster
// comma-separated, as docs/deploy.md says: a list whose first server does
// not answer still reaches sandox through the next.
func TestWithURLServerList(t *testing.T) {
	s := startSandox(t)
	g := s.newGroup(t, sdk.GroupConfig{ID: "urls"}, sdk.WithURL("nats://127.0.0.1:1, "+s.url))
	require.NoError(t, g.Start(t.Context()))
	require.NoError(t, g.End(t.Context()))
}
