package auth

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCurrent(t *testing.T) {
	a, err := NewAuthority()
	require.NoError(t, err)
	client, err := a.Mint("client", RoleClient, "")
	require.NoError(t, err)
	assert.True(t, Current(client, RoleClient), "freshly minted")
	audit, err := a.Mint("client", RoleAudit, "")
	require.NoError(t, err)
	assert.False(t, Current(audit, RoleClient), "other permissions, as an older sandox's client would have")
	assert.False(t, Current(Creds{JWT: "x.y.z"}, RoleClient))
}
