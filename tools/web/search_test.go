package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/search"
	"github.com/sandox/sandox/services/search/searchtest"
	"github.com/sandox/sandox/tools"
)

// startSearch starts embedded NATS and, when cfg is not nil, the real
// search service on it; it returns the sandbox side's connection.
func startSearch(t *testing.T, cfg *search.Config) *nats.Conn {
	t.Helper()
	ns := natstest.Start(t)
	nc := natstest.Connect(t, ns)
	if cfg == nil {
		return nc
	}
	svcConn, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	t.Cleanup(svcConn.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- search.New(*cfg, slog.New(slog.DiscardHandler)).Serve(ctx, svcConn) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	// Ready when it answers (an empty query is answered without a provider).
	require.Eventually(t, func() bool {
		_, err := nc.Request(schemas.SandboxSearchSubject("sb-web"), []byte(`{"query":""}`), 200*time.Millisecond)
		return err == nil
	}, 5*time.Second, 20*time.Millisecond)
	return nc
}

func TestWebSearchThroughService(t *testing.T) {
	searx := httptest.NewServer(searchtest.SearXNGStandIn())
	t.Cleanup(searx.Close)
	cfg := search.DefaultConfig()
	cfg.SearXNG.URL = searx.URL
	nc := startSearch(t, &cfg)
	w := newWeb(t, Config{Search: NewNATSSearcher("sb-web", nc)})

	res, err := call(t, w, "web_search", map[string]any{"query": "sandox", "count": 3})
	require.NoError(t, err)
	title, url, snippet := searchtest.Result("searxng", 1, "sandox")
	assert.Contains(t, res.Stdout, "3 results (provider searxng)")
	assert.Contains(t, res.Stdout, "1. ["+title+"]("+url+")\n   "+snippet)
	var got []schemas.SearchResult
	require.NoError(t, json.Unmarshal(res.Return, &got))
	assert.Len(t, got, 3)

	_, err = call(t, w, "web_search", map[string]any{"query": "sandox", "provider": "brave"})
	require.Error(t, err)
	assert.Equal(t, schemas.CodeUnavailable, tools.ErrorCode(err))
	assert.Contains(t, err.Error(), "set SANDOX_SEARCH_BRAVE_API_KEY")
}

func TestWebSearchWithoutService(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(t *testing.T) Config
	}{
		{"no searcher", func(t *testing.T) Config { return Config{} }},
		{"nobody serves the subject", func(t *testing.T) Config { return Config{Search: NewNATSSearcher("sb-web", startSearch(t, nil))} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWeb(t, tt.cfg(t))
			_, err := call(t, w, "web_search", map[string]any{"query": "q"})
			require.ErrorIs(t, err, ErrNoSearch)
			assert.Equal(t, schemas.CodeUnsupported, tools.ErrorCode(err))
		})
	}
}
