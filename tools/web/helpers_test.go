package web

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/web/webtest"
)

// serveSite starts the test site on loopback and returns its base URL.
func serveSite(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(webtest.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// newWeb returns web tools writing under a temporary workspace, closed at
// the end of the test.
func newWeb(t *testing.T, cfg Config) *Web {
	t.Helper()
	if cfg.Workspace == "" {
		cfg.Workspace = t.TempDir()
	}
	w := New(cfg)
	t.Cleanup(func() { require.NoError(t, w.Close()) })
	return w
}

// call runs the tool named name with args.
func call(t *testing.T, w *Web, name string, args any) (tools.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	for _, tool := range w.Tools() {
		if tool.Name == name {
			return tool.Call(context.Background(), raw)
		}
	}
	t.Fatalf("no tool %q", name)
	return tools.Result{}, nil
}
