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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/docker"
	"github.com/sandox/sandox/services/orchestrator"
	"github.com/sandox/sandox/services/search"
	"github.com/sandox/sandox/services/search/searchtest"
	"github.com/sandox/sandox/tools/web/webtest"
)

// TestWebTools runs web_tools in a real sandbox container made from the
// image with Chromium (build.WebSandboxImage), against the test site served
// on the sandbox network's gateway and the search service in the test
// process, which asks stand-ins of the three providers.
func TestWebTools(t *testing.T) {
	site := serveOnGateway(t, webtest.Handler())
	startSearchService(t)
	sb := startWebSandbox(t)

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

// webSandbox is a sandbox container made from the web image, driven over
// NATS the way the SDK and the NATS CLI drive sandboxes.
type webSandbox struct {
	id string
}

// startWebSandbox builds build.WebSandboxImage and runs one container of
// it, hardened as the orchestrator runs sandboxes (read-only root, every
// capability dropped, unprivileged user, tmpfs /tmp and /workspace), until
// the test ends.
//
// TODO(registry): create it through the SDK with tools ["web_tools.py"]
// once the tool-family registry puts Chromium into web_tools' images.
func startWebSandbox(t *testing.T) *webSandbox {
	t.Helper()
	ctx := t.Context()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	cfg := build.DefaultConfig(root)
	if testing.Verbose() {
		cfg.Progress = os.Stderr
	}
	require.NoError(t, build.NewBuilder(env.docker, cfg).WebSandbox(ctx))

	sb := &webSandbox{id: fmt.Sprintf("it-web-%d", os.Getpid())}
	id, err := env.docker.Create(ctx, docker.ContainerSpec{
		Name:         "sandox-" + sb.id,
		Image:        build.WebSandboxImage,
		Labels:       map[string]string{orchestrator.LabelManaged: "true"},
		User:         orchestrator.SandboxUser,
		Env:          []string{"SANDOX_SANDBOX_ID=" + sb.id, "SANDOX_NATS_URL=" + env.url},
		Network:      env.network,
		Memory:       1 << 30,
		PidsLimit:    512,
		ReadOnlyRoot: true,
		Hardened:     true,
		Init:         true,
		Tmpfs: map[string]string{
			"/tmp":       "rw,nosuid,nodev,size=256m,mode=1777",
			"/workspace": "rw,nosuid,nodev,size=128m,uid=10001,gid=10001,mode=0755",
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.docker.Remove(context.WithoutCancel(ctx), id) })
	require.NoError(t, env.docker.Start(ctx, id))
	require.Eventually(t, func() bool {
		_, err := env.nc.Request(schemas.PingSubject(sb.id), nil, 250*time.Millisecond)
		return err == nil
	}, 60*time.Second, 100*time.Millisecond, "the web sandbox's executor did not answer")
	return sb
}

// batch sends a batch and fails on a batch error or a failed action.
func (sb *webSandbox) batch(t *testing.T, payload string) []schemas.Observation {
	t.Helper()
	m := nats.NewMsg(schemas.ActionsSubject(sb.id))
	m.Data = []byte(payload)
	m.Header.Set(schemas.HeaderBatchID, fmt.Sprintf("b-%d", time.Now().UnixNano()))
	reply, err := env.nc.RequestMsgWithContext(t.Context(), m)
	require.NoError(t, err)
	var res schemas.BatchResult
	require.NoError(t, json.Unmarshal(reply.Data, &res))
	require.Nil(t, res.Error)
	for _, o := range res.Observations {
		mustOK(t, o)
	}
	return res.Observations
}

// action runs one action in its own batch and returns its observation,
// failed or not.
func (sb *webSandbox) action(t *testing.T, tool string, args map[string]any) schemas.Observation {
	t.Helper()
	payload, err := json.Marshal(map[string]any{tool: map[string]any{"args": args}})
	require.NoError(t, err)
	m := nats.NewMsg(schemas.ActionsSubject(sb.id))
	m.Data = payload
	m.Header.Set(schemas.HeaderBatchID, fmt.Sprintf("b-%d", time.Now().UnixNano()))
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	reply, err := env.nc.RequestMsgWithContext(ctx, m)
	require.NoError(t, err)
	var res schemas.BatchResult
	require.NoError(t, json.Unmarshal(reply.Data, &res))
	require.Nil(t, res.Error)
	require.Len(t, res.Observations, 1)
	return res.Observations[0]
}

// one runs one action in its own batch and fails unless it succeeded.
func (sb *webSandbox) one(t *testing.T, tool string, args map[string]any) schemas.Observation {
	t.Helper()
	o := sb.action(t, tool, args)
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
// control plane's side), asking stand-ins of the hosted search APIs served
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
	nc, err := nats.Connect(env.url)
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
