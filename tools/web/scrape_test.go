package web

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools/web/webtest"
)

func TestScrapeWebsiteWholeSite(t *testing.T) {
	base := serveSite(t)
	w := newWeb(t, Config{})
	res, err := call(t, w, "scrape_website", map[string]any{"url": base + "/", "delay_ms": 0})
	require.NoError(t, err)
	out := res.Stdout

	for path, text := range webtest.Pages {
		assert.Equal(t, 1, strings.Count(out, text), "text of %s", path)
		assert.Contains(t, out, "URL: "+base+path, "URL of %s", path)
	}
	for _, boiler := range []string{webtest.Nav, webtest.Header, webtest.Footer, "footer script"} {
		assert.NotContains(t, out, boiler)
	}
	assert.Equal(t, 1, strings.Count(out, webtest.CodeText), "code text")
	assert.Contains(t, out, "```go\n"+webtest.CodeText+"\n```", "code block")
	assert.Regexp(t, regexp.MustCompile(`\|\s*Name\s*\|\s*Colour\s*\|`), out, "table header")
	for _, row := range webtest.TableRows {
		assert.Regexp(t, regexp.MustCompile(`\|\s*`+row[0]+`\s*\|\s*`+row[1]+`\s*\|`), out, "table row %s", row[0])
	}
	assert.Contains(t, out, "- first step", "list")
	assert.Contains(t, out, "[docs]("+base+"/docs)", "absolute link")
	assert.Contains(t, out, "# Table\n\nURL: "+base+"/table", "title heading")

	assert.NotContains(t, out, webtest.PrivateText)
	assert.Contains(t, out, base+"/private: disallowed by robots.txt")
	assert.Contains(t, out, `content type "application/pdf"`)
	assert.Contains(t, out, base+"/gone: 404 Not Found")
}

func TestScrapeWebsiteLimits(t *testing.T) {
	base := serveSite(t)
	tests := []struct {
		name    string
		args    map[string]any
		want    []string // page paths that must be in the document
		notWant []string // page paths that must not
		note    string
	}{
		{"depth zero is the start page only", map[string]any{"max_depth": 0}, []string{"/"}, []string{"/docs", "/table"}, ""},
		{"depth one follows the start page's links", map[string]any{"max_depth": 1}, []string{"/", "/docs", "/table", "/js", "/login"}, nil, ""},
		{"max pages", map[string]any{"max_pages": 2}, []string{"/"}, []string{"/table", "/js"}, "page limit of 2 was reached"},
		{"include", map[string]any{"include": []string{`/(docs|table)$`}}, []string{"/", "/docs", "/table"}, []string{"/js", "/login"}, ""},
		{"exclude", map[string]any{"exclude": []string{`/js$`, `/login`}}, []string{"/", "/docs", "/table"}, []string{"/js", "/login"}, ""},
		{"robots ignored when told", map[string]any{"ignore_robots_txt": true}, []string{"/private"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWeb(t, Config{})
			tt.args["url"] = base + "/"
			tt.args["delay_ms"] = 0
			res, err := call(t, w, "scrape_website", tt.args)
			require.NoError(t, err)
			for _, p := range tt.want {
				assert.Contains(t, res.Stdout, "URL: "+base+p+"\n", "want %s", p)
			}
			for _, p := range tt.notWant {
				assert.NotContains(t, res.Stdout, "URL: "+base+p+"\n", "do not want %s", p)
			}
			assert.Contains(t, res.Stdout, tt.note)
		})
	}
}

func TestScrapeWebsiteTimeBudget(t *testing.T) {
	base := serveSite(t)
	w := newWeb(t, Config{})
	res, err := call(t, w, "scrape_website", map[string]any{"url": base + "/", "delay_ms": 1500, "time_budget_seconds": 1})
	require.NoError(t, err)
	assert.Contains(t, res.Stdout, "The time budget of 1s ran out")
	assert.Contains(t, res.Stdout, "URL: "+base+"/\n")
}

func TestScrapeWebsiteOversizeGoesToFile(t *testing.T) {
	base := serveSite(t)
	w := newWeb(t, Config{MaxObservationBytes: 1000})
	res, err := call(t, w, "scrape_website", map[string]any{"url": base + "/", "delay_ms": 0})
	require.NoError(t, err)
	m := regexp.MustCompile(`written to (\S+\.md)`).FindStringSubmatch(res.Stdout)
	require.NotNil(t, m, "observation %q names no file", res.Stdout)
	data, err := os.ReadFile(m[1])
	require.NoError(t, err)
	for path, text := range webtest.Pages {
		assert.Equal(t, 1, strings.Count(string(data), text), "text of %s in the file", path)
	}
	assert.Less(t, len(res.Stdout), 1000+previewBytes)
}

func TestScrapeWebsiteStartPageErrors(t *testing.T) {
	base := serveSite(t)
	tests := []struct {
		name string
		url  string
		want error
		msg  string
	}{
		{"404", base + "/gone", ErrHTTPStatus, "404 Not Found"},
		{"robots", base + "/private", schemas.CodeAccessDenied, "disallowed by robots.txt"},
		{"not HTML", base + "/report.pdf", ErrNotHTML, "application/pdf"},
		{"unreachable", "http://127.0.0.1:1/", ErrUnreachable, "connection refused"},
		{"not a URL", "ftp://example/", schemas.CodeInvalidArgs, "want an absolute http or https URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWeb(t, Config{})
			_, err := call(t, w, "scrape_website", map[string]any{"url": tt.url, "delay_ms": 0})
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}
