package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/launcher/flags"
	"github.com/go-rod/rod/lib/proto"
)

// DefaultChromium is where the distribution installs Chromium.
const DefaultChromium = "/usr/bin/chromium"

// BrowserConfig configures the browser the browser tools drive.
type BrowserConfig struct {
	// Bin is the Chromium executable. Default DefaultChromium. The tools
	// never download a browser: without this file they fail with
	// ErrNoBrowser.
	Bin string
	// Show runs the browser with a window, for debugging on a desktop.
	Show bool
}

// browserSession is the one browser of a sandbox and its current page. It
// launches on first use and lives until close, so cookies and the current
// page carry over from one action (and one batch) to the next. mu
// serialises the actions: a page does one thing at a time.
type browserSession struct {
	cfg BrowserConfig
	log *slog.Logger

	mu       sync.Mutex
	launcher *launcher.Launcher
	browser  *rod.Browser
	page     *rod.Page
}

func newBrowserSession(cfg BrowserConfig, log *slog.Logger) *browserSession {
	if cfg.Bin == "" {
		cfg.Bin = DefaultChromium
	}
	return &browserSession{cfg: cfg, log: log}
}

// do runs fn on the session's page, launching the browser first if it is
// not running. It blocks while another action runs. When fn finds the
// browser gone, the session is dropped and the next call launches anew.
func (s *browserSession) do(ctx context.Context, fn func(p *rod.Page) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.page == nil {
		if err := s.launch(); err != nil {
			return err
		}
	}
	err := fn(s.page.Context(ctx))
	if err != nil && s.browserGone() {
		s.log.Warn("browser is gone; the next browser call starts a new one", "err", err)
		s.shutdown()
	}
	return err
}

// launch starts Chromium headless and opens a blank page. Callers hold mu.
func (s *browserSession) launch() error {
	if _, err := os.Stat(s.cfg.Bin); err != nil {
		return fmt.Errorf("%s: %v (this sandbox needs web_tools' image with Chromium): %w", s.cfg.Bin, err, ErrNoBrowser)
	}
	l := launcher.New().
		Bin(s.cfg.Bin).
		Headless(!s.cfg.Show).
		NoSandbox(true).
		Leakless(false).
		Set(flags.Flag("disable-gpu")).
		Set(flags.Flag("disable-background-networking")).
		Set(flags.Flag("disable-dev-shm-usage"))
	if proxy := proxyFromEnv(); proxy != "" {
		l = l.Proxy(proxy)
		if bypass := firstEnv("NO_PROXY", "no_proxy"); bypass != "" {
			l = l.Set(flags.Flag("proxy-bypass-list"), strings.ReplaceAll(bypass, ",", ";"))
		}
	}
	u, err := l.Launch()
	if err != nil {
		l.Cleanup()
		return fmt.Errorf("launch %s: %w", s.cfg.Bin, err)
	}
	b := rod.New().ControlURL(u)
	if err := b.Connect(); err != nil {
		l.Kill()
		l.Cleanup()
		return fmt.Errorf("connect to %s: %w", s.cfg.Bin, err)
	}
	p, err := b.Page(proto.TargetCreateTarget{URL: "about:blank"})
	if err != nil {
		_ = b.Close()
		l.Cleanup()
		return fmt.Errorf("open a page in %s: %w", s.cfg.Bin, err)
	}
	s.launcher, s.browser, s.page = l, b, p
	s.log.Debug("browser launched", "bin", s.cfg.Bin)
	return nil
}

// browserGone reports whether the browser process no longer answers.
// Callers hold mu.
func (s *browserSession) browserGone() bool {
	if s.browser == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := s.browser.Context(ctx).Version()
	return err != nil
}

// shutdown ends the browser and removes its profile. Callers hold mu.
func (s *browserSession) shutdown() error {
	var err error
	if s.browser != nil {
		err = s.browser.Close()
	}
	if s.launcher != nil {
		s.launcher.Kill()
		s.launcher.Cleanup()
	}
	s.launcher, s.browser, s.page = nil, nil, nil
	return err
}

// close ends the browser, if one runs. It is safe to call more than once.
func (s *browserSession) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.browser == nil {
		return nil
	}
	if err := s.shutdown(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("close browser: %w", err)
	}
	return nil
}

// proxyFromEnv returns the proxy the browser should use, from the same
// variables Go's HTTP client reads.
func proxyFromEnv() string {
	return firstEnv("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")
}

func firstEnv(keys ...string) string {
	for _, k := range keys {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}
