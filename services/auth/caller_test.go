package auth

import (
	"encoding/base64"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestCallerOf checks what is recorded of a command's caller.
func TestCallerOf(t *testing.T) {
	authority, err := NewAuthority()
	require.NoError(t, err)
	other, err := NewAuthority()
	require.NoError(t, err)
	signed := func(a *Authority, id, signID string) nats.Header {
		c, err := a.Mint("bob", RoleClient, "")
		require.NoError(t, err)
		kp, err := nkeys.FromSeed(c.Seed)
		require.NoError(t, err)
		sig, err := kp.Sign([]byte(signID))
		require.NoError(t, err)
		return nats.Header{schemas.HeaderCallerJWT: {c.JWT}, schemas.HeaderCallerSig: {base64.RawURLEncoding.EncodeToString(sig)}}
	}
	tests := []struct {
		name     string
		hdr      nats.Header
		account  string
		verified bool
		who      string
	}{
		{name: "signed by a user of the account", hdr: signed(authority, "c1", "c1"), account: authority.AccountKey(), verified: true, who: "bob"},
		{name: "signature of another command", hdr: signed(authority, "c1", "c2"), account: authority.AccountKey(), who: "bob"},
		{name: "user of another account", hdr: signed(other, "c1", "c1"), account: authority.AccountKey(), who: "bob"},
		{name: "worker without an account", hdr: signed(authority, "c1", "c1"), who: "bob"},
		{name: "no caller", hdr: nats.Header{}, account: authority.AccountKey()},
		{name: "garbage JWT", hdr: nats.Header{schemas.HeaderCallerJWT: {"x.y.z"}}, account: authority.AccountKey()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CallerOf(tt.hdr, []byte("c1"), tt.account)
			assert.Equal(t, tt.verified, c.Verified, "verified (note %q)", c.Note)
			assert.Equal(t, tt.who, c.Name)
			if !tt.verified {
				assert.NotEmpty(t, c.Note, "an unverified caller says why")
			}
		})
	}
}
