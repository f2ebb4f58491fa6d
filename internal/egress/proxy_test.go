package egress_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/egress"
)

// server answers with its name on addr ("127.0.0.2:0").
func server(t *testing.T, addr, name string, tls bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, name) }))
	s.Listener.Close()
	s.Listener = ln
	if tls {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s.URL
}

func TestProxyLetsOnlyTheListed(t *testing.T) {
	allowed := server(t, "127.0.0.1:0", "allowed", false)
	other := server(t, "127.0.0.2:0", "other", false)
	otherTLS := server(t, "127.0.0.2:0", "other", true)

	list, err := egress.ParseAllowlist([]string{"127.0.0.1/32", "*.example.com"})
	require.NoError(t, err)
	p := &egress.Proxies{Dir: t.TempDir()}
	sock, err := p.Open("sb-1", list)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close("sb-1") })
	client := &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}

	t.Run("a listed CIDR goes through", func(t *testing.T) {
		resp, err := client.Get(allowed)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "allowed", string(body))
	})
	t.Run("another address is refused with 403", func(t *testing.T) {
		resp, err := client.Get(other)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Contains(t, string(body), "not on the sandbox's egress allowlist")
	})
	t.Run("a CONNECT to another address is refused", func(t *testing.T) {
		_, err := client.Get(otherTLS)
		assert.Error(t, err)
	})
	t.Run("closed, the socket is gone", func(t *testing.T) {
		require.NoError(t, p.Close("sb-1"))
		_, err := client.Get(allowed)
		assert.Error(t, err)
	})
}

func TestParseAllowlist(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		host    string
		want    bool
		wantErr bool
	}{
		{"exact name", []string{"example.com"}, "example.com", true, false},
		{"a subdomain is not the name", []string{"example.com"}, "a.example.com", false, false},
		{"wildcard subdomain", []string{"*.example.com"}, "a.example.com", true, false},
		{"address in CIDR", []string{"10.0.0.0/8"}, "10.1.2.3", true, false},
		{"address outside CIDR", []string{"10.0.0.0/8"}, "192.168.1.1", false, false},
		{"single address", []string{"192.0.2.7"}, "192.0.2.7", true, false},
		{"bad CIDR", []string{"10.0.0.0/99"}, "", false, true},
		{"a port is not a host", []string{"example.com:80"}, "", false, true},
		{"empty entry", []string{""}, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := egress.ParseAllowlist(tt.entries)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, a.Allows(tt.host))
		})
	}
}
