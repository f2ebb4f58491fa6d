package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// idleQuiet is how long the network must be quiet to count as idle.
const idleQuiet = 500 * time.Millisecond

type openArgs struct {
	URL             string `json:"url" jsonschema:"description=Absolute http or https URL to open in the browser's page."`
	WaitSelector    string `json:"wait_selector,omitempty" jsonschema:"description=After the page loads, wait until an element matches this CSS selector."`
	WaitXPath       string `json:"wait_xpath,omitempty" jsonschema:"description=After the page loads, wait until an element matches this XPath."`
	WaitNetworkIdle bool   `json:"wait_network_idle,omitempty" jsonschema:"description=After the page loads, wait until no request has been in flight for half a second."`
	TimeoutSeconds  int    `json:"timeout_seconds,omitempty" jsonschema:"minimum=1,maximum=300,description=How long to wait for the page and the conditions. Default: 30."`
}

func (w *Web) browserOpen() tools.Tool {
	return tools.New(Family, "browser_open",
		"Open a URL in the sandbox's browser (Chromium, JavaScript on) and wait for it to load, and optionally for a selector or for the network to go idle. "+
			"The browser keeps its cookies and current page across actions and batches, so a login, a navigation and an extraction can be separate actions.",
		func(ctx context.Context, a openArgs) (tools.Result, error) {
			if err := checkURL(a.URL); err != nil {
				return tools.Result{}, err
			}
			timeout := seconds(a.TimeoutSeconds, 30)
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			var out string
			err := w.browser.do(ctx, func(p *rod.Page) error {
				var idle func()
				if a.WaitNetworkIdle {
					idle = p.WaitRequestIdle(idleQuiet, nil, nil, nil)
				}
				if err := p.Navigate(a.URL); err != nil {
					return browserError("open "+a.URL, timeout, err)
				}
				if err := p.WaitLoad(); err != nil {
					return browserError("load "+a.URL, timeout, err)
				}
				if idle != nil {
					idle()
				}
				if err := waitFor(p, target{Selector: a.WaitSelector, XPath: a.WaitXPath}, timeout); err != nil {
					return err
				}
				var err error
				out, err = describePage(p)
				return err
			})
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Stdout: out}, nil
		})
}

// waitFor waits for each condition t names; an empty t waits for nothing.
func waitFor(p *rod.Page, t target, timeout time.Duration) error {
	for _, one := range []target{{Selector: t.Selector}, {XPath: t.XPath}} {
		if one.Selector == "" && one.XPath == "" {
			continue
		}
		if _, err := one.find(p, timeout.String()); err != nil {
			return err
		}
	}
	return nil
}

// describePage says where the page is: its URL, title and the HTTP status
// of its document. A 4xx or 5xx document is ErrHTTPStatus.
func describePage(p *rod.Page) (string, error) {
	res, err := p.Eval(`() => {
		const nav = performance.getEntriesByType("navigation")[0];
		return {url: location.href, title: document.title, status: nav ? nav.responseStatus || 0 : 0};
	}`)
	if err != nil {
		return "", fmt.Errorf("read the page: %w", err)
	}
	var info struct {
		URL    string `json:"url"`
		Title  string `json:"title"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal([]byte(res.Value.JSON("", "")), &info); err != nil {
		return "", fmt.Errorf("read the page: %w", err)
	}
	if info.Status >= 400 {
		return "", statusError(info.URL, info.Status)
	}
	status := ""
	if info.Status > 0 {
		status = fmt.Sprintf(" (HTTP %d)", info.Status)
	}
	return fmt.Sprintf("Page %s%s, title %q.", info.URL, status, info.Title), nil
}

// browserError names what the browser was doing when err happened, turning
// a passed deadline into a timeout that says how long it waited and a
// failed navigation into ErrUnreachable.
func browserError(doing string, timeout time.Duration, err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, context.DeadlineExceeded), strings.Contains(msg, "context deadline exceeded"):
		return fmt.Errorf("%s: nothing after %s: %w", doing, timeout, context.DeadlineExceeded)
	case strings.Contains(msg, "net::ERR_NAME_NOT_RESOLVED"), strings.Contains(msg, "net::ERR_CONNECTION_REFUSED"),
		strings.Contains(msg, "net::ERR_ADDRESS_UNREACHABLE"), strings.Contains(msg, "net::ERR_INTERNET_DISCONNECTED"),
		strings.Contains(msg, "net::ERR_PROXY_CONNECTION_FAILED"), strings.Contains(msg, "net::ERR_CONNECTION_TIMED_OUT"):
		return fmt.Errorf("%s: %s: %w", doing, msg, ErrUnreachable)
	default:
		return fmt.Errorf("%s: %w", doing, err)
	}
}

type clickArgs struct {
	target
	WaitNavigation bool `json:"wait_navigation,omitempty" jsonschema:"description=Wait for the page the click leads to to load."`
	TimeoutSeconds int  `json:"timeout_seconds,omitempty" jsonschema:"minimum=1,maximum=300,description=How long to wait for the element (and the navigation). Default: 10."`
}

func (w *Web) browserClick() tools.Tool {
	return tools.New(Family, "browser_click",
		"Click an element of the browser's current page, found by CSS selector or XPath; optionally wait for the page the click leads to.",
		func(ctx context.Context, a clickArgs) (tools.Result, error) {
			return w.onElement(ctx, a.target, a.TimeoutSeconds, a.WaitNavigation, "clicked", func(el *rod.Element) error {
				return el.Click(proto.InputMouseButtonLeft, 1)
			})
		})
}

type typeArgs struct {
	target
	Text           string `json:"text" jsonschema:"description=Text to type into the element."`
	Append         bool   `json:"append,omitempty" jsonschema:"description=Keep the element's current value and type after it. Default: replace it."`
	PressEnter     bool   `json:"press_enter,omitempty" jsonschema:"description=Press Enter after typing (which submits most forms) and wait for the page to load."`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"minimum=1,maximum=300,description=How long to wait for the element. Default: 10."`
}

func (w *Web) browserType() tools.Tool {
	return tools.New(Family, "browser_type",
		"Type text into an input or text area of the browser's current page, found by CSS selector or XPath.",
		func(ctx context.Context, a typeArgs) (tools.Result, error) {
			return w.onElement(ctx, a.target, a.TimeoutSeconds, a.PressEnter, "typed into", func(el *rod.Element) error {
				if !a.Append {
					if _, err := el.Eval(`function() { this.value = ""; }`); err != nil {
						return err
					}
				}
				if err := el.Input(a.Text); err != nil {
					return err
				}
				if a.PressEnter {
					return el.Type('\r')
				}
				return nil
			})
		})
}

type selectArgs struct {
	target
	Values         []string `json:"values" jsonschema:"minItems=1,description=Options to select, each matched by its value or its visible text."`
	TimeoutSeconds int      `json:"timeout_seconds,omitempty" jsonschema:"minimum=1,maximum=300,description=How long to wait for the element. Default: 10."`
}

func (w *Web) browserSelect() tools.Tool {
	return tools.New(Family, "browser_select",
		"Select options of a <select> element of the browser's current page; each value matches an option's value or visible text.",
		func(ctx context.Context, a selectArgs) (tools.Result, error) {
			return w.onElement(ctx, a.target, a.TimeoutSeconds, false, "selected in", func(el *rod.Element) error {
				res, err := el.Eval(`function(values) {
					if (!this.options) return -1;
					let n = 0;
					for (const o of this.options) {
						o.selected = values.includes(o.value) || values.includes(o.text.trim());
						if (o.selected) n++;
					}
					this.dispatchEvent(new Event("input", {bubbles: true}));
					this.dispatchEvent(new Event("change", {bubbles: true}));
					return n;
				}`, a.Values)
				if err != nil {
					return err
				}
				switch n := res.Value.Int(); {
				case n < 0:
					return fmt.Errorf("%s is not a <select>: %w", a.target, schemas.CodeInvalidArgs)
				case n == 0:
					return fmt.Errorf("no option of %s matches %q: %w", a.target, a.Values, tools.ErrNotFound)
				}
				return nil
			})
		})
}

type submitArgs struct {
	target
	TimeoutSeconds int `json:"timeout_seconds,omitempty" jsonschema:"minimum=1,maximum=300,description=How long to wait for the form and the page it leads to. Default: 10."`
}

func (w *Web) browserSubmit() tools.Tool {
	return tools.New(Family, "browser_submit",
		"Submit a form of the browser's current page (the element found, or the form it is in) and wait for the page it leads to.",
		func(ctx context.Context, a submitArgs) (tools.Result, error) {
			return w.onElement(ctx, a.target, a.TimeoutSeconds, true, "submitted", func(el *rod.Element) error {
				res, err := el.Eval(`function() {
					const form = this.tagName === "FORM" ? this : this.form;
					if (!form) return false;
					form.requestSubmit();
					return true;
				}`)
				if err != nil {
					return err
				}
				if !res.Value.Bool() {
					return fmt.Errorf("%s is neither a form nor in one: %w", a.target, schemas.CodeInvalidArgs)
				}
				return nil
			})
		})
}

// onElement finds the element t names and runs act on it; with navigate it
// then waits for the page that act leads to. The observation describes the
// page afterwards.
func (w *Web) onElement(ctx context.Context, t target, timeoutSecs int, navigate bool, verb string, act func(*rod.Element) error) (tools.Result, error) {
	if err := t.check(); err != nil {
		return tools.Result{}, err
	}
	timeout := seconds(timeoutSecs, 10)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out string
	err := w.browser.do(ctx, func(p *rod.Page) error {
		el, err := t.find(p, timeout.String())
		if err != nil {
			return err
		}
		var loaded func()
		if navigate {
			loaded = p.WaitNavigation(proto.PageLifecycleEventNameLoad)
		}
		if err := act(el); err != nil {
			return browserError(verb+" "+t.String(), timeout, err)
		}
		if loaded != nil {
			loaded()
		}
		out, err = describePage(p)
		return err
	})
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Stdout: fmt.Sprintf("%s %s. %s", upperFirst(verb), t, out)}, nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
