package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/search"
	"github.com/sandox/sandox/services/search/searchtest"
	"github.com/sandox/sandox/tools/web/webtest"
)

// TestWebTools runs web_tools in a real sandbox that chose the family
// (its image has Chromium), against the test site served on the sandbox
// network's gateway and the search service in the test process, which asks
// stand-ins of the three providers.
func TestWebTools(t *testing.T) {
	site := serveOnGateway(t, webtest.Handler())
	startSearchService(t)
	// The site is outside the sandbox: its egress must be open (the
	// default, none, reaches nothing).
	group := newGroup(t, sdk.GroupConfig{ID: "it-web", Tools: []string{"filesystem_tools.py", "web_tools.py"}, Egress: &schemas.Egress{Policy: schemas.EgressOpen}})
	sb := &webSandbox{sb: startSandbox(t, group, "it-web-1", sdk.SandboxOptions{})}

	t.Run("scrape contains every page's text once and no boilerplate", func(t *testing.T) {
		o := sb.one(t, "web_tools.scrape_website", map[string]any{"url": site + "/", "delay_ms": 0})
		for path, text := range webtest.Pages {
			assert.Equal(t, 1, strings.Count(o.Stdout, text), "text of %s", path)
			assert.Contains(t, o.Stdout, "URL: "+site+path+"\n")
		}
		assert.Equal(t, 1, strings.Count(o.Stdout, webtest.CodeText))
		for _, boiler := range []string{webtest.Nav, webtest.Header, webtest.Footer} {
			assert.NotContains(t, o.Stdout, boiler)
		}
		assert.Regexp(t, `\|\s*Banana\s*\|\s*yellow\s*\|`, o.Stdout)
		assert.NotContains(t, o.Stdout, webtest.PrivateText, "robots.txt is respected")
	})

	t.Run("browser extracts records from the JavaScript page", func(t *testing.T) {
		obs := sb.batch(t, `{
			"web_tools.browser_open": {"args": {"url": "`+site+`/js", "wait_selector": "li.record"}},
			"web_tools.browser_extract": {"args": {"selector": "li.record", "fields": {"name": {"selector": ".name"}, "price": {"selector": ".price"}}}}
		}`)
		var got []map[string]string
		require.NoError(t, json.Unmarshal(obs[1].Return, &got))
		assert.Equal(t, webtest.Records, got)
	})

	t.Run("login across separate actions", func(t *testing.T) {
		sb.one(t, "web_tools.browser_open", map[string]any{"url": site + "/login"})
		sb.one(t, "web_tools.browser_type", map[string]any{"selector": "#username", "text": webtest.Username})
		sb.one(t, "web_tools.browser_type", map[string]any{"selector": "#password", "text": webtest.Password})
		o := sb.one(t, "web_tools.browser_submit", map[string]any{"selector": "form"})
		assert.Contains(t, o.Stdout, site+"/welcome")
		sb.one(t, "web_tools.browser_open", map[string]any{"url": site + "/account", "wait_selector": "#balance"})
		o = sb.one(t, "web_tools.browser_extract", map[string]any{"selector": "#balance"})
		assert.JSONEq(t, fmt.Sprintf("%q", webtest.SecretText), string(o.Return))
	})

	t.Run("screenshot is a valid PNG", func(t *testing.T) {
		o := sb.one(t, "web_tools.browser_screenshot", map[string]any{"full_page": true})
		m := regexp.MustCompile(`to (/workspace/web/\S+\.png)$`).FindStringSubmatch(o.Stdout)
		require.NotNil(t, m, "observation %q names no PNG", o.Stdout)
		o = sb.one(t, "filesystem_tools.read_file", map[string]any{"path": m[1], "encoding": "base64"})
		data, err := base64.StdEncoding.DecodeString(o.Stdout)
		require.NoError(t, err)
		_, err = png.Decode(bytes.NewReader(data))
		require.NoError(t, err)
	})

	t.Run("web_search through the search service", func(t *testing.T) {
		for _, p := range []string{"brave", "google", "searxng"} {
			o := sb.one(t, "web_tools.web_search", map[string]any{"query": "sandox", "provider": p, "count": 3})
			var got []schemas.SearchResult
			require.NoError(t, json.Unmarshal(o.Return, &got))
			require.Len(t, got, 3, p)
			title, _, _ := searchtest.Result(p, 1, "sandox")
			assert.Equal(t, title, got[0].Title)
		}
	})

	t.Run("clear observations for failures", func(t *testing.T) {
		tests := []struct {
			name string
			tool string
			args map[string]any
			code schemas.ErrorCode
			msg  string
		}{
			{"HTTP error", "web_tools.fetch_markdown", map[string]any{"url": site + "/gone"}, schemas.CodeToolError, "404 Not Found"},
			{"not HTML", "web_tools.fetch_markdown", map[string]any{"url": site + "/report.pdf"}, schemas.CodeUnsupported, "application/pdf"},
			{"unreachable", "web_tools.fetch_markdown", map[string]any{"url": "http://no-such-host.invalid/"}, schemas.CodeToolError, "does not resolve"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				o := sb.action(t, tt.tool, tt.args)
				require.NotNil(t, o.Error, "%s: stdout %q", tt.name, o.Stdout)
				assert.Equal(t, tt.code, o.Error.Code)
				assert.Contains(t, o.Error.Message, tt.msg)
			})
		}
	})
}

// webSandbox runs actions in a sandbox through the SDK.
type webSandbox struct {
	sb *sdk.Sandbox
}

// batch sends a batch and fails on a batch error or a failed action.
func (w *webSandbox) batch(t *testing.T, payload string) []schemas.Observation {
	t.Helper()
	obs := send(t, w.sb, payload)
	for _, o := range obs {
		mustOK(t, o)
	}
	return obs
}

// action runs one action in its own batch and returns its observation,
// failed or not.
func (w *webSandbox) action(t *testing.T, tool string, args map[string]any) schemas.Observation {
	t.Helper()
	payload, err := json.Marshal(map[string]any{tool: map[string]any{"args": args}})
	require.NoError(t, err)
	obs := send(t, w.sb, string(payload))
	require.Len(t, obs, 1)
	return obs[0]
}

// one runs one action in its own batch and fails unless it succeeded.
func (w *webSandbox) one(t *testing.T, tool string, args map[string]any) schemas.Observation {
	t.Helper()
	o := w.action(t, tool, args)
	mustOK(t, o)
	return o
}

// serveOnGateway serves h on the sandbox network's gateway address (where
// the test's NATS listens too), so sandboxes reach it and nothing outside
// the machine is involved. It returns the base URL.
func serveOnGateway(t *testing.T, h http.Handler) string {
	t.Helper()
	u, err := url.Parse(env.url)
	require.NoError(t, err)
	l, err := net.Listen("tcp", net.JoinHostPort(u.Hostname(), "0"))
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("test site: %v", err)
		}
	}()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
}

// startSearchService runs the real search service in the test process (the
// control plane's side, with the search identity), asking stand-ins of the hosted search APIs served
// on loopback.
func startSearchService(t *testing.T) {
	t.Helper()
	brave := httptest.NewServer(searchtest.BraveStandIn())
	google := httptest.NewServer(searchtest.GoogleStandIn())
	searx := httptest.NewServer(searchtest.SearXNGStandIn())
	for _, s := range []*httptest.Server{brave, google, searx} {
		t.Cleanup(s.Close)
	}
	cfg := search.DefaultConfig()
	cfg.Brave = search.Brave{Endpoint: brave.URL, APIKey: searchtest.Key}
	cfg.Google = search.Google{Endpoint: google.URL, APIKey: searchtest.Key, EngineID: searchtest.EngineID}
	cfg.SearXNG = search.SearXNG{URL: searx.URL}
	nc, err := connectAs(auth.RoleSearch)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- search.New(cfg, slog.New(slog.DiscardHandler)).Serve(ctx, nc) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}
