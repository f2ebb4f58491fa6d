package dashboard

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServe serves a dashboard with a token on a loopback listener: a
// request without the token is refused, one with it answered, and the
// server stops, Serve returning nil, when its context ends.
func TestServe(t *testing.T) {
	s := startSystem(t, Options{})
	dash, err := New(s.nc, Options{Token: "t0ken"})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- dash.Serve(ctx, ln) }()

	url := "http://" + ln.Addr().String() + "/"
	res, err := http.Get(url)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer t0ken")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)

	cancel()
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	_, err = http.Get(url)
	assert.Error(t, err, "the listener is closed")
}

// TestServeWantsTokenOffLoopback checks that a dashboard without a token
// refuses to serve on an address that is not loopback.
func TestServeWantsTokenOffLoopback(t *testing.T) {
	s := startSystem(t, Options{})
	dash, err := New(s.nc, Options{})
	require.NoError(t, err)
	err = dash.ListenAndServe(t.Context(), "0.0.0.0:0")
	require.ErrorContains(t, err, "wants a token")
}

// TestServeFails checks that Serve returns, its feed stopped, when its
// listener fails, though its context goes on.
func TestServeFails(t *testing.T) {
	s := startSystem(t, Options{})
	dash, err := New(s.nc, Options{})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	served := make(chan error, 1)
	go func() { served <- dash.Serve(t.Context(), ln) }()
	select {
	case err := <-served:
		require.Error(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return when its listener failed")
	}
}
