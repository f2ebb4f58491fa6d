package web

import (
	"context"
	"errors"
	"fmt"

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

// find waits up to the page's deadline for the element t names. A missing
// element is tools.ErrNotFound, saying how long it waited.
func (t target) find(p *rod.Page, waited string) (*rod.Element, error) {
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
