package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/tools/web/webtest"
)

// proxyHits is an HTTP forward proxy standing in for the sandbox's egress
// proxy: it serves the test site for every host and records the hosts
// asked for.
type proxyHits struct {
	mu    sync.Mutex
	hosts []string
}

func (p *proxyHits) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.hosts = append(p.hosts, r.Host)
	p.mu.Unlock()
	webtest.Handler().ServeHTTP(w, r)
}

func (p *proxyHits) saw(host string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.hosts {
		if h == host {
			return true
		}
	}
	return false
}

// TestToolsUseTheProxyFromTheEnvironment shows that the web tools reach a
// host that only the proxy serves (site.invalid does not resolve) when
// HTTP_PROXY names the proxy, as the sandbox's egress policy sets it.
func TestToolsUseTheProxyFromTheEnvironment(t *testing.T) {
	const site = "http://site.invalid"

	tests := []struct {
		name    string
		browser bool
		tool    string
		args    map[string]any
		want    string
	}{
		{"fetch_markdown", false, "fetch_markdown", map[string]any{"url": site + "/docs"}, webtest.DocsText},
		{"scrape_website", false, "scrape_website", map[string]any{"url": site + "/", "delay_ms": 0, "max_depth": 1}, webtest.TableText},
		{"browser_open", true, "browser_open", map[string]any{"url": site + "/table"}, `title "Table"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.browser {
				needChromium(t)
			}
			hits := &proxyHits{}
			proxy := httptest.NewServer(hits)
			t.Cleanup(proxy.Close)
			t.Setenv("HTTP_PROXY", proxy.URL)
			t.Setenv("http_proxy", proxy.URL)
			t.Setenv("NO_PROXY", "")
			t.Setenv("no_proxy", "")
			w := newWeb(t, Config{})
			res, err := call(t, w, tt.tool, tt.args)
			require.NoError(t, err)
			assert.Contains(t, res.Stdout, tt.want)
			assert.True(t, hits.saw(strings.TrimPrefix(site, "http://")), "the proxy saw no request for %s", site)
		})
	}
}
