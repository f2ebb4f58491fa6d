package data

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePopulateAllow(t *testing.T) {
	allow, err := parsePopulateAllow([]string{"example.org", "*.corp.example", "10.0.0.0/8"})
	require.NoError(t, err)
	for host, want := range map[string]bool{"example.org": true, "a.corp.example": true, "10.1.2.3": true, "127.0.0.1": false} {
		assert.Equal(t, want, allow.Allows(host), host)
	}
	none, err := parsePopulateAllow(nil)
	require.NoError(t, err)
	assert.False(t, none.Allows("example.org"), "an empty allowlist allows nothing")

	_, err = parsePopulateAllow([]string{"exa mple.com"})
	assert.ErrorContains(t, err, "SANDOX_POPULATE_ALLOW")
}
