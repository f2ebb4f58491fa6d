package web

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-rod/rod"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// target names one element of the current page by CSS selector or XPath.
type target struct {
	Selector string `json:"selector,omitempty" jsonschema:"description=CSS selector of the element. Give this or xpath."`
	XPath    string `json:"xpath,omitempty" jsonschema:"description=XPath of the element. Give this or selector."`
}

func (t target) String() string {
	if t.XPath != "" {
		return fmt.Sprintf("xpath %q", t.XPath)
	}
	return fmt.Sprintf("selector %q", t.Selector)
}

func (t target) check() error {
	if (t.Selector == "") == (t.XPath == "") {
		return fmt.Errorf("give exactly one of selector and xpath: %w", schemas.CodeInvalidArgs)
	}
	return nil
}

// errorPagePrefix begins the URL of the page Chromium shows when a
// navigation failed (an unknown host, a refused connection).
const errorPagePrefix = "chrome-error://"

// find waits up to the page's deadline for the element t names. A missing
// element is tools.ErrNotFound, saying how long it waited. On Chromium's
// error page, left by a browser_open that failed, no element of the site
// can appear (and the error page's own must not match), so find says so at
// once instead of waiting out the deadline.
func (t target) find(p *rod.Page, waited string) (*rod.Element, error) {
	if strings.HasPrefix(documentURL(p), errorPagePrefix) {
		return nil, fmt.Errorf("no element matches %s: the browser shows Chromium's error page because the last page it opened did not load; open one with browser_open first: %w", t, tools.ErrNotFound)
	}
	var el *rod.Element
	var err error
	if t.XPath != "" {
		el, err = p.ElementX(t.XPath)
	} else {
		el, err = p.Element(t.Selector)
	}
	switch {
	case err == nil:
		return el, nil
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("no element matches %s on %s after %s: %w", t, pageURL(p), waited, tools.ErrNotFound)
	default:
		return nil, fmt.Errorf("find %s: %w", t, err)
	}
}

// pageURL is the page's current URL, or "the page" when it cannot be read.
func pageURL(p *rod.Page) string {
	info, err := p.Info()
	if err != nil {
		return "the page"
	}
	return info.URL
}

// documentURL is the URL of the document the page shows, which on an error
// page is Chromium's own (the page's URL is still the one that failed), or
// "" when it cannot be read.
func documentURL(p *rod.Page) string {
	res, err := p.Eval(`() => document.URL`)
	if err != nil {
		return ""
	}
	return res.Value.Str()
}
