package data

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/services/egress"
)

// TestPopulateFetchDialsOnlyTheAllowlist shows the data service's HTTP
// client refusing, where it connects, a host that is not listed: a
// redirect from an allowed host to another address goes nowhere.
func TestPopulateFetchDialsOnlyTheAllowlist(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("secret")) }))
	t.Cleanup(target.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	viaName := strings.Replace(redirect.URL, "127.0.0.1", "localhost", 1)

	f, err := newPopulateFetch([]string{"localhost"})
	require.NoError(t, err)
	assert.True(t, f.allow.Allows("localhost"))
	assert.False(t, f.allow.Allows("127.0.0.1"))
	_, err = f.client.Get(viaName)
	require.Error(t, err, "the redirect to 127.0.0.1, which is not listed")
	assert.ErrorIs(t, err, egress.ErrDenied)

	none, err := newPopulateFetch(nil)
	require.NoError(t, err)
	_, err = none.client.Get(target.URL)
	assert.ErrorIs(t, err, egress.ErrDenied, "an empty allowlist reaches nothing")

	_, err = newPopulateFetch([]string{"exa mple.com"})
	assert.ErrorContains(t, err, "SANDOX_POPULATE_ALLOW")
}
