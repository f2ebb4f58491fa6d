package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools/web/webtest"
)

func TestFetchMarkdown(t *testing.T) {
	base := serveSite(t)
	w := newWeb(t, Config{})
	res, err := call(t, w, "fetch_markdown", map[string]any{"url": base + "/docs"})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(res.Stdout, "# Docs\n\nURL: "+base+"/docs\n"), "got %q", res.Stdout)
	assert.Contains(t, res.Stdout, webtest.DocsText)
	assert.Contains(t, res.Stdout, "```go\n"+webtest.CodeText+"\n```")
	assert.NotContains(t, res.Stdout, webtest.Nav)
	assert.NotContains(t, res.Stdout, webtest.Footer)
}

func TestFetchMarkdownErrors(t *testing.T) {
	base := serveSite(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	tests := []struct {
		name string
		cfg  Config
		args map[string]any
		want error
		msg  string
	}{
		{"404", Config{}, map[string]any{"url": base + "/gone"}, ErrHTTPStatus, "404 Not Found"},
		{"401", Config{}, map[string]any{"url": base + "/account"}, ErrHTTPStatus, "401 Unauthorized"},
		{"not HTML", Config{}, map[string]any{"url": base + "/report.pdf"}, ErrNotHTML, `content type "application/pdf"`},
		{"oversize", Config{MaxPageBytes: 100 << 10}, map[string]any{"url": base + "/big"}, ErrPageTooLarge, "more than 102400 bytes"},
		{"unreachable", Config{}, map[string]any{"url": "http://127.0.0.1:1/"}, ErrUnreachable, "connection refused"},
		{"no such host", Config{}, map[string]any{"url": "http://no-such-host.invalid/"}, ErrUnreachable, "does not resolve"},
		{"timeout", Config{}, map[string]any{"url": slow.URL, "timeout_seconds": 1}, context.DeadlineExceeded, "no answer in time"},
		{"bad URL", Config{}, map[string]any{"url": "/relative"}, schemas.CodeInvalidArgs, "absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWeb(t, tt.cfg)
			_, err := call(t, w, "fetch_markdown", tt.args)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestFetchMarkdownOversizeGoesToFile(t *testing.T) {
	base := serveSite(t)
	w := newWeb(t, Config{MaxObservationBytes: 200})
	res, err := call(t, w, "fetch_markdown", map[string]any{"url": base + "/docs"})
	require.NoError(t, err)
	assert.Contains(t, res.Stdout, "over the observation limit of 200 bytes and was written to "+w.cfg.Workspace+"/web/page-")
	path := savedPathMD(t, res.Stdout)
	data := mustRead(t, path)
	assert.Contains(t, string(data), webtest.DocsText)
	assert.Contains(t, string(data), webtest.CodeText)
}

func savedPathMD(t *testing.T, observation string) string {
	t.Helper()
	i := strings.Index(observation, "written to ")
	require.GreaterOrEqual(t, i, 0, "observation %q names no file", observation)
	rest := observation[i+len("written to "):]
	return rest[:strings.IndexByte(rest, '\n')]
}
