package web

import (
	"log/slog"
	"net/http"

	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/catalog"
)

// Family is the family's name (catalog.Web), the part before the dot in
// "web_tools.scrape_website".
const Family = catalog.Web

// Config configures the web tools. The zero value of each field means its
// default.
type Config struct {
	// Workspace is the directory oversize markdown, screenshots and PDFs
	// are written under (in its web/ subdirectory). Default: the process's
	// working directory.
	Workspace string
	// MaxObservationBytes is the largest markdown returned in the
	// observation itself; larger documents go to a file. Default 64 KiB.
	MaxObservationBytes int
	// MaxPageBytes bounds one page's HTML. Default 10 MiB.
	MaxPageBytes int64
	// UserAgent is sent with every request. Default "sandox-web/1".
	UserAgent string
	// Browser configures the Chromium the browser tools drive.
	Browser BrowserConfig
	// Search answers web_search. Nil makes web_search fail with ErrNoSearch.
	Search Searcher
	// Logger receives the tools' diagnostics. Default slog.Default().
	Logger *slog.Logger
}

// Web holds the state the web tools share: the HTTP transport and the
// browser session. Its methods are safe for concurrent use.
type Web struct {
	cfg     Config
	http    *http.Client
	browser *browserSession
}

// New returns the web tools on cfg. Nothing starts until a tool is called;
// Close ends the browser if one was launched.
func New(cfg Config) *Web {
	if cfg.Workspace == "" {
		cfg.Workspace = "."
	}
	if cfg.MaxObservationBytes <= 0 {
		cfg.MaxObservationBytes = 64 << 10
	}
	if cfg.MaxPageBytes <= 0 {
		cfg.MaxPageBytes = 10 << 20
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "sandox-web/1"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &Web{cfg: cfg, http: &http.Client{Transport: newTransport()}}
	w.browser = newBrowserSession(cfg.Browser, cfg.Logger)
	return w
}

// Tools returns the tools of the module.
func (w *Web) Tools() []tools.Tool {
	return []tools.Tool{
		w.fetchMarkdown(),
		w.scrapeWebsite(),
		w.webSearch(),
		w.browserOpen(),
		w.browserExtract(),
		w.browserClick(),
		w.browserType(),
		w.browserSelect(),
		w.browserSubmit(),
		w.browserScroll(),
		w.browserEval(),
		w.browserScreenshot(),
		w.browserPDF(),
	}
}

// Close ends the browser session, if one was started.
func (w *Web) Close() error {
	return w.browser.close()
}
