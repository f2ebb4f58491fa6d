package search

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/search/searchtest"
)

// standIns serves the three providers' stand-ins and returns a Config
// pointing at them with valid keys.
func standIns(t *testing.T) Config {
	t.Helper()
	brave := httptest.NewServer(searchtest.BraveStandIn())
	google := httptest.NewServer(searchtest.GoogleStandIn())
	searx := httptest.NewServer(searchtest.SearXNGStandIn())
	t.Cleanup(brave.Close)
	t.Cleanup(google.Close)
	t.Cleanup(searx.Close)
	cfg := DefaultConfig()
	cfg.Brave = Brave{Endpoint: brave.URL + "/res/v1/web/search", APIKey: searchtest.Key}
	cfg.Google = Google{Endpoint: google.URL + "/customsearch/v1", APIKey: searchtest.Key, EngineID: searchtest.EngineID}
	cfg.SearXNG = SearXNG{URL: searx.URL}
	return cfg
}

func want(p string, n int, query string) []schemas.SearchResult {
	out := make([]schemas.SearchResult, n)
	for i := range out {
		title, url, snippet := searchtest.Result(p, i+1, query)
		out[i] = schemas.SearchResult{Title: title, URL: url, Snippet: snippet}
	}
	return out
}

func TestServiceProviders(t *testing.T) {
	cfg := standIns(t)
	svc := New(cfg, slog.New(slog.DiscardHandler))
	tests := []struct {
		name     string
		req      schemas.SearchRequest
		provider string
		results  []schemas.SearchResult
	}{
		{"brave", schemas.SearchRequest{Query: "go nats", Count: 3, Provider: "brave"}, "brave", want("brave", 3, "go nats")},
		{"google one page", schemas.SearchRequest{Query: "go nats", Count: 4, Provider: "google"}, "google", want("google", 4, "go nats")},
		{"google three pages", schemas.SearchRequest{Query: "q", Count: 23, Provider: "google"}, "google", want("google", 23, "q")},
		{"searxng cut to count", schemas.SearchRequest{Query: "rod", Count: 2, Provider: "searxng"}, "searxng", want("searxng", 2, "rod")},
		{"default is the first configured", schemas.SearchRequest{Query: "x"}, "brave", want("brave", 10, "x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := svc.Search(t.Context(), tt.req)
			require.Nil(t, resp.Error)
			assert.Equal(t, tt.provider, resp.Provider)
			assert.Equal(t, tt.results, resp.Results)
		})
	}
}

func TestServiceErrors(t *testing.T) {
	good := standIns(t)
	tests := []struct {
		name string
		cfg  func(c *Config)
		req  schemas.SearchRequest
		code schemas.ErrorCode
		msg  string
	}{
		{"brave without key", func(c *Config) { c.Brave.APIKey = "" }, schemas.SearchRequest{Query: "q", Provider: "brave"}, schemas.CodeUnavailable, "set SANDOX_SEARCH_BRAVE_API_KEY or SANDOX_SEARCH_BRAVE_API_KEY_FILE"},
		{"google without key", func(c *Config) { c.Google.APIKey = "" }, schemas.SearchRequest{Query: "q", Provider: "google"}, schemas.CodeUnavailable, "set SANDOX_SEARCH_GOOGLE_API_KEY"},
		{"google without cx", func(c *Config) { c.Google.EngineID = "" }, schemas.SearchRequest{Query: "q", Provider: "google"}, schemas.CodeUnavailable, "set SANDOX_SEARCH_GOOGLE_CX"},
		{"searxng without URL", func(c *Config) { c.SearXNG.URL = "" }, schemas.SearchRequest{Query: "q", Provider: "searxng"}, schemas.CodeUnavailable, "set SANDOX_SEARCH_SEARXNG_URL"},
		{"nothing configured names the default's setting", func(c *Config) { *c = DefaultConfig() }, schemas.SearchRequest{Query: "q"}, schemas.CodeUnavailable, "set SANDOX_SEARCH_BRAVE_API_KEY"},
		{"brave refuses the key", func(c *Config) { c.Brave.APIKey = "wrong" }, schemas.SearchRequest{Query: "q", Provider: "brave"}, schemas.CodeUnavailable, "HTTP 401 (the API key was refused)"},
		{"google refuses the key", func(c *Config) { c.Google.APIKey = "wrong" }, schemas.SearchRequest{Query: "q", Provider: "google"}, schemas.CodeUnavailable, "API key not valid"},
		{"unknown provider", func(c *Config) {}, schemas.SearchRequest{Query: "q", Provider: "bing"}, schemas.CodeBadRequest, `unknown search provider "bing"`},
		{"empty query", func(c *Config) {}, schemas.SearchRequest{Query: "  "}, schemas.CodeBadRequest, "the query is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good
			tt.cfg(&cfg)
			resp := New(cfg, slog.New(slog.DiscardHandler)).Search(t.Context(), tt.req)
			require.NotNil(t, resp.Error)
			assert.Equal(t, tt.code, resp.Error.Code)
			assert.Contains(t, resp.Error.Message, tt.msg)
		})
	}
}

func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	keyFile := dir + "/brave.key"
	require.NoError(t, os.WriteFile(keyFile, []byte("from-file\n"), 0o600))
	env := map[string]string{
		EnvBraveKey + "_FILE": keyFile,
		EnvGoogleKey:          "g-key",
		EnvGoogleCX:           "cx-1",
		EnvSearXNGURL:         "http://searxng:8080",
		EnvProvider:           "searxng",
	}
	cfg, err := FromEnv(func(k string) string { return env[k] }, os.ReadFile)
	require.NoError(t, err)
	assert.Equal(t, "from-file", cfg.Brave.APIKey)
	assert.Equal(t, "g-key", cfg.Google.APIKey)
	assert.Equal(t, "cx-1", cfg.Google.EngineID)
	assert.Equal(t, "http://searxng:8080", cfg.SearXNG.URL)
	assert.Equal(t, "searxng", cfg.Default)
	assert.Equal(t, DefaultConfig().Quota, cfg.Quota, "the default quota")

	env[EnvQuotaPerMinute], env[EnvQuotaBurst] = "120", "5"
	cfg, err = FromEnv(func(k string) string { return env[k] }, os.ReadFile)
	require.NoError(t, err)
	assert.Equal(t, Quota{PerMinute: 120, Burst: 5}, cfg.Quota)
	for key, bad := range map[string]string{EnvQuotaPerMinute: "lots", EnvQuotaBurst: "0"} {
		env[key] = bad
		_, err = FromEnv(func(k string) string { return env[k] }, os.ReadFile)
		require.Error(t, err, key)
		assert.Contains(t, err.Error(), key)
		delete(env, key)
	}

	env[EnvBraveKey+"_FILE"] = dir + "/missing"
	_, err = FromEnv(func(k string) string { return env[k] }, os.ReadFile)
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), EnvBraveKey+"_FILE")
}

// serve runs a Service on cfg over a fresh NATS server until the test
// ends and returns a client connection, once the service answers the
// first request, ask (its response is returned too).
func serve(t *testing.T, cfg Config, sandbox string, ask schemas.SearchRequest) (*nats.Conn, schemas.SearchResponse) {
	t.Helper()
	nc := startNATS(t)
	svc := New(cfg, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, nc) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	var resp schemas.SearchResponse
	require.Eventually(t, func() bool {
		var err error
		resp, err = requestSearchAs(nc, sandbox, ask)
		return err == nil
	}, 5*time.Second, 50*time.Millisecond)
	return nc, resp
}

func TestServeOverNATS(t *testing.T) {
	_, resp := serve(t, standIns(t), "sb-search", schemas.SearchRequest{Query: "over nats", Count: 2, Provider: "searxng"})
	require.Nil(t, resp.Error)
	assert.Equal(t, want("searxng", 2, "over nats"), resp.Results)
}

// TestServeQuota shows a sandbox that searches faster than its quota get
// resource_exhausted, naming the quota and when to retry, while another
// sandbox is still served.
func TestServeQuota(t *testing.T) {
	cfg := standIns(t)
	cfg.Quota = Quota{PerMinute: 1, Burst: 2}
	req := schemas.SearchRequest{Query: "q", Count: 1, Provider: "searxng"}
	nc, resp := serve(t, cfg, "sb-loop", req)
	require.Nil(t, resp.Error, "the first of the burst")
	resp, err := requestSearchAs(nc, "sb-loop", req)
	require.NoError(t, err)
	require.Nil(t, resp.Error, "the second of the burst")

	resp, err = requestSearchAs(nc, "sb-loop", req)
	require.NoError(t, err)
	require.NotNil(t, resp.Error, "the third")
	assert.Equal(t, schemas.CodeResourceExhausted, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "sandbox sb-loop may search 1 times a minute (2 at once); try again in ")
	assert.Empty(t, resp.Results)

	resp, err = requestSearchAs(nc, "sb-other", req)
	require.NoError(t, err)
	assert.Nil(t, resp.Error, "another sandbox's quota is its own")
	assert.Len(t, resp.Results, 1)
}

func requestSearchAs(nc *nats.Conn, sandbox string, req schemas.SearchRequest) (schemas.SearchResponse, error) {
	var resp schemas.SearchResponse
	data, _ := json.Marshal(req)
	msg, err := nc.Request(schemas.SandboxSearchSubject(sandbox), data, 2*time.Second)
	if err != nil {
		return resp, err
	}
	return resp, json.Unmarshal(msg.Data, &resp)
}

func startNATS(t *testing.T) *nats.Conn {
	t.Helper()
	return natstest.Connect(t, natstest.Start(t))
}
