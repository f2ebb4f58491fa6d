package dashboard

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGuard(t *testing.T) {
	s := startSystem(t, Options{Token: "s3cret"})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		name   string
		method string
		path   string
		host   string
		header map[string]string
		code   int
		want   string
	}{
		{"no token", "GET", "/", "", nil, http.StatusUnauthorized, "wants its token"},
		{"wrong token", "GET", "/?token=nope", "", nil, http.StatusUnauthorized, "wants its token"},
		{"token in the address sets a cookie", "GET", "/groups/x?token=s3cret", "", nil, http.StatusSeeOther, ""},
		{"cookie", "GET", "/", "", map[string]string{"Cookie": tokenCookie + "=s3cret"}, http.StatusOK, "Hosts"},
		{"bearer", "GET", "/", "", map[string]string{"Authorization": "Bearer s3cret"}, http.StatusOK, "Hosts"},
		{"rebinding: a foreign Host", "GET", "/", "evil.example:80", map[string]string{"Authorization": "Bearer s3cret"}, http.StatusForbidden, "invalid Host header"},
		{"localhost Host", "GET", "/", "localhost:1", map[string]string{"Authorization": "Bearer s3cret"}, http.StatusOK, "Hosts"},
		{"POST", "POST", "/", "", map[string]string{"Authorization": "Bearer s3cret"}, http.StatusMethodNotAllowed, "read-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, s.http.URL+tt.path, nil)
			require.NoError(t, err)
			if tt.host != "" {
				req.Host = tt.host
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := noRedirect.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			body := string(data)
			assert.Equal(t, tt.code, resp.StatusCode, "got body %q", body)
			assert.Contains(t, body, tt.want)
			assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
			if tt.code == http.StatusSeeOther {
				assert.Equal(t, "/groups/x", resp.Header.Get("Location"))
				assert.Contains(t, resp.Header.Get("Set-Cookie"), tokenCookie+"=s3cret")
				assert.Contains(t, resp.Header.Get("Set-Cookie"), "HttpOnly")
			}
		})
	}
}

func TestLoopback(t *testing.T) {
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1:8089", true}, {"localhost:8089", true}, {"localhost", true}, {"[::1]:8089", true},
		{"app.localhost", true}, {"LOCALHOST.", true},
		{"evil.example:8089", false}, {"192.168.1.5", false}, {"localhost.evil.example", false}, {"", false},
	} {
		assert.Equal(t, tt.want, loopback(tt.host), tt.host)
	}
}
