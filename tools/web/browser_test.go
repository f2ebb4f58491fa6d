package web

import (
	"bytes"
	"encoding/json"
	"image/png"
	"net"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/web/webtest"
)

// needChromium skips the test when the distribution's Chromium is missing.
// build/scripts/test.sh installs it, so CI runs these tests.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(DefaultChromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; build/scripts/test.sh should have installed it", DefaultChromium)
		}
		t.Skipf("%s is not installed (build/scripts/test.sh installs it)", DefaultChromium)
	}
}

func TestBrowserExtractsRecordsFromJavaScriptPage(t *testing.T) {
	needChromium(t)
	base := serveSite(t)
	w := newWeb(t, Config{})

	res, err := call(t, w, "browser_open", map[string]any{"url": base + "/js", "wait_selector": "li.record"})
	require.NoError(t, err)
	assert.Contains(t, res.Stdout, `title "Records"`)
	assert.Contains(t, res.Stdout, "HTTP 200")

	tests := []struct {
		name string
		args map[string]any
		want any
	}{
		{"records with named sub-selectors", map[string]any{"selector": "li.record", "fields": map[string]any{
			"name": map[string]any{"selector": ".name"}, "price": map[string]any{"xpath": ".//span[@class='price']"}}},
			[]any{map[string]any{"name": "alpha", "price": "1.50"}, map[string]any{"name": "beta", "price": "2.75"}, map[string]any{"name": "gamma", "price": "9.00"}}},
		{"one value", map[string]any{"selector": "li.record .name"}, "alpha"},
		{"all values", map[string]any{"selector": "li.record .name", "all": true}, []any{"alpha", "beta", "gamma"}},
		{"xpath", map[string]any{"xpath": "//li[@class='record'][2]/span[@class='price']"}, "2.75"},
		{"attribute", map[string]any{"selector": "nav a", "attribute": "href", "all": true}, []any{"/", "/docs", "/table", "/js", "/login"}},
		{"missing field is null", map[string]any{"selector": "li.record", "fields": map[string]any{"none": map[string]any{"selector": ".nothing"}}},
			[]any{map[string]any{"none": nil}, map[string]any{"none": nil}, map[string]any{"none": nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(t, w, "browser_extract", tt.args)
			require.NoError(t, err)
			var got any
			require.NoError(t, json.Unmarshal(res.Return, &got))
			assert.Equal(t, tt.want, got)
		})
	}
	require.Len(t, webtest.Records, 3)
}

func TestBrowserLoginAcrossActions(t *testing.T) {
	needChromium(t)
	base := serveSite(t)
	w := newWeb(t, Config{})

	steps := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"browser_open", map[string]any{"url": base + "/login"}, `title "Login"`},
		{"browser_type", map[string]any{"selector": "#username", "text": webtest.Username}, "Typed into"},
		{"browser_type", map[string]any{"xpath": "//input[@name='password']", "text": webtest.Password}, "Typed into"},
		{"browser_select", map[string]any{"selector": "#remember", "values": []string{"Remember me"}}, "Selected in"},
		{"browser_submit", map[string]any{"selector": "form"}, base + "/welcome"},
		{"browser_click", map[string]any{"selector": "main a[href='/account']", "wait_navigation": true}, base + "/account"},
	}
	for _, s := range steps {
		res, err := call(t, w, s.tool, s.args)
		require.NoError(t, err, "%s %v", s.tool, s.args)
		require.Contains(t, res.Stdout, s.want, "%s", s.tool)
	}
	res, err := call(t, w, "browser_extract", map[string]any{"selector": "#balance"})
	require.NoError(t, err)
	assert.JSONEq(t, `"`+webtest.SecretText+`"`, string(res.Return))

	res, err = call(t, w, "browser_eval", map[string]any{"script": "document.cookie === '' ? 'httponly' : document.cookie"})
	require.NoError(t, err)
	assert.JSONEq(t, `"httponly"`, string(res.Return), "the session cookie is HttpOnly")

	// A page opened later in the same session still has the cookie.
	res, err = call(t, w, "browser_open", map[string]any{"url": base + "/account", "wait_selector": "#balance"})
	require.NoError(t, err)
	assert.Contains(t, res.Stdout, "HTTP 200")
}

func TestBrowserCaptures(t *testing.T) {
	needChromium(t)
	base := serveSite(t)
	w := newWeb(t, Config{})
	_, err := call(t, w, "browser_open", map[string]any{"url": base + "/table", "wait_network_idle": true})
	require.NoError(t, err)

	res, err := call(t, w, "browser_screenshot", map[string]any{"full_page": true})
	require.NoError(t, err)
	path := savedPath(t, res.Stdout, ".png")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err, "the screenshot is a valid PNG")
	assert.Positive(t, img.Bounds().Dx())

	res, err = call(t, w, "browser_screenshot", map[string]any{"selector": "#fruits"})
	require.NoError(t, err)
	_, err = png.Decode(bytes.NewReader(mustRead(t, savedPath(t, res.Stdout, ".png"))))
	require.NoError(t, err)

	res, err = call(t, w, "browser_pdf", map[string]any{})
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(mustRead(t, savedPath(t, res.Stdout, ".pdf")), []byte("%PDF-")), "a PDF file")

	res, err = call(t, w, "browser_scroll", map[string]any{"to": "bottom"})
	require.NoError(t, err)
	assert.Contains(t, res.Stdout, "Scrolled")
}

func TestBrowserErrors(t *testing.T) {
	needChromium(t)
	base := serveSite(t)
	w := newWeb(t, Config{})
	closed := closedPortURL(t)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want error
		msg  string
	}{
		{"HTTP error", "browser_open", map[string]any{"url": base + "/gone"}, ErrHTTPStatus, "404 Not Found"},
		{"unreachable", "browser_open", map[string]any{"url": closed}, ErrUnreachable, "ERR_CONNECTION_REFUSED"},
		// Right after the failed open: the error page answers at once,
		// not after the default 10 s wait, and its own elements never match.
		{"on the error page of a failed open", "browser_click", map[string]any{"selector": "button"}, tools.ErrNotFound, "did not load; open one with browser_open first"},
		{"extract on the error page", "browser_extract", map[string]any{"selector": "body"}, tools.ErrNotFound, "Chromium's error page"},
		{"selector never appears", "browser_open", map[string]any{"url": base + "/", "wait_selector": "#never", "timeout_seconds": 1}, tools.ErrNotFound, `no element matches selector "#never"`},
		{"missing element", "browser_click", map[string]any{"selector": "#never", "timeout_seconds": 1}, tools.ErrNotFound, "after 1s"},
		{"both selector and xpath", "browser_click", map[string]any{"selector": "a", "xpath": "//a"}, schemas.CodeInvalidArgs, "exactly one"},
		{"script throws", "browser_eval", map[string]any{"script": "throw new Error('boom')"}, schemas.CodeInvalidArgs, "boom"},
		{"not a select", "browser_select", map[string]any{"selector": "main", "values": []string{"x"}}, schemas.CodeInvalidArgs, "not a <select>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t, w, tt.tool, tt.args)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestBrowserMissingChromium(t *testing.T) {
	w := newWeb(t, Config{Browser: BrowserConfig{Bin: "/nonexistent/chromium"}})
	_, err := call(t, w, "browser_open", map[string]any{"url": "http://127.0.0.1:1/"})
	require.ErrorIs(t, err, ErrNoBrowser)
	assert.ErrorIs(t, err, schemas.CodeUnsupported)
}

// closedPortURL returns a loopback URL on a port nothing listens on.
func closedPortURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr + "/"
}

func savedPath(t *testing.T, observation, ext string) string {
	t.Helper()
	m := regexp.MustCompile(`to (/\S+` + regexp.QuoteMeta(ext) + `)$`).FindStringSubmatch(observation)
	require.NotNil(t, m, "observation %q names no %s file", observation, ext)
	return m[1]
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}
