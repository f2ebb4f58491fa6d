package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

type scrollArgs struct {
	Selector       string `json:"selector,omitempty" jsonschema:"description=Scroll this element (CSS selector) into view."`
	To             string `json:"to,omitempty" jsonschema:"enum=top,enum=bottom,description=Scroll the page to its top or bottom."`
	Pixels         int    `json:"pixels,omitempty" jsonschema:"description=Scroll the page down by this many pixels (negative: up)."`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"minimum=1,maximum=300,description=How long to wait for the element. Default: 10."`
}

func (w *Web) browserScroll() tools.Tool {
	return tools.New(Family, "browser_scroll",
		"Scroll the browser's current page: an element into view (selector), to the top or bottom (to), or by a number of pixels. "+
			"Pages that load more content on scroll get the chance to.",
		func(ctx context.Context, a scrollArgs) (tools.Result, error) {
			given := 0
			for _, set := range []bool{a.Selector != "", a.To != "", a.Pixels != 0} {
				if set {
					given++
				}
			}
			if given != 1 {
				return tools.Result{}, fmt.Errorf("give exactly one of selector, to and pixels: %w", schemas.CodeInvalidArgs)
			}
			timeout := seconds(a.TimeoutSeconds, 10)
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			var y int
			err := w.browser.do(ctx, func(p *rod.Page) error {
				if a.Selector != "" {
					el, err := target{Selector: a.Selector}.find(p, timeout.String())
					if err != nil {
						return err
					}
					if err := el.ScrollIntoView(); err != nil {
						return browserError("scroll to "+a.Selector, timeout, err)
					}
				} else {
					if _, err := p.Eval(`function(to, px) {
						if (to === "top") window.scrollTo(0, 0);
						else if (to === "bottom") window.scrollTo(0, document.documentElement.scrollHeight);
						else window.scrollBy(0, px);
					}`, a.To, a.Pixels); err != nil {
						return browserError("scroll", timeout, err)
					}
				}
				res, err := p.Eval(`() => Math.round(window.scrollY)`)
				if err != nil {
					return browserError("scroll", timeout, err)
				}
				y = res.Value.Int()
				return nil
			})
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Stdout: fmt.Sprintf("Scrolled; the page is now at y=%d.", y)}, nil
		})
}

type evalArgs struct {
	Script         string `json:"script" jsonschema:"description=JavaScript expression to evaluate in the page; a promise is awaited. Its value comes back as JSON."`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"minimum=1,maximum=300,description=How long the script may run. Default: 30."`
}

func (w *Web) browserEval() tools.Tool {
	return tools.New(Family, "browser_eval",
		"Run a JavaScript expression in the browser's current page and return its value as JSON (promises are awaited). "+
			"An exception thrown by the script is the tool's error.",
		func(ctx context.Context, a evalArgs) (tools.Result, error) {
			timeout := seconds(a.TimeoutSeconds, 30)
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			var value json.RawMessage
			err := w.browser.do(ctx, func(p *rod.Page) error {
				res, err := proto.RuntimeEvaluate{Expression: a.Script, ReturnByValue: true, AwaitPromise: true, UserGesture: true}.Call(p)
				if err != nil {
					return browserError("run the script", timeout, err)
				}
				if ex := res.ExceptionDetails; ex != nil {
					msg := ex.Text
					if ex.Exception != nil && ex.Exception.Description != "" {
						msg = ex.Exception.Description
					}
					return fmt.Errorf("the script threw: %s: %w", msg, schemas.CodeInvalidArgs)
				}
				value = json.RawMessage(res.Result.Value.JSON("", ""))
				return nil
			})
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Stdout: string(value), Return: value}, nil
		})
}

type screenshotArgs struct {
	FullPage bool   `json:"full_page,omitempty" jsonschema:"description=Capture the whole page, not only the visible part."`
	Selector string `json:"selector,omitempty" jsonschema:"description=Capture only this element (CSS selector)."`
}

func (w *Web) browserScreenshot() tools.Tool {
	return tools.New(Family, "browser_screenshot",
		"Take a PNG screenshot of the browser's current page (or of one element) and save it in the workspace; the observation gives its path.",
		func(ctx context.Context, a screenshotArgs) (tools.Result, error) {
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			var png []byte
			err := w.browser.do(ctx, func(p *rod.Page) error {
				var err error
				if a.Selector != "" {
					el, ferr := target{Selector: a.Selector}.find(p, "30s")
					if ferr != nil {
						return ferr
					}
					png, err = el.Screenshot(proto.PageCaptureScreenshotFormatPng, 0)
				} else {
					png, err = p.Screenshot(a.FullPage, &proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng})
				}
				if err != nil {
					return browserError("screenshot", 30*time.Second, err)
				}
				return nil
			})
			if err != nil {
				return tools.Result{}, err
			}
			path, err := w.saveFile("screenshot", ".png", png)
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Stdout: fmt.Sprintf("Saved a PNG screenshot (%d bytes) to %s", len(png), path)}, nil
		})
}

type pdfArgs struct {
	Landscape bool `json:"landscape,omitempty" jsonschema:"description=Print in landscape orientation."`
}

func (w *Web) browserPDF() tools.Tool {
	return tools.New(Family, "browser_pdf",
		"Print the browser's current page to a PDF saved in the workspace; the observation gives its path.",
		func(ctx context.Context, a pdfArgs) (tools.Result, error) {
			ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			var pdf []byte
			err := w.browser.do(ctx, func(p *rod.Page) error {
				r, err := p.PDF(&proto.PagePrintToPDF{Landscape: a.Landscape, PrintBackground: true})
				if err != nil {
					return browserError("print to PDF", 60*time.Second, err)
				}
				pdf, err = io.ReadAll(r)
				if err != nil {
					return browserError("print to PDF", 60*time.Second, err)
				}
				return nil
			})
			if err != nil {
				return tools.Result{}, err
			}
			path, err := w.saveFile("page", ".pdf", pdf)
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Stdout: fmt.Sprintf("Saved a PDF (%d bytes) to %s", len(pdf), path)}, nil
		})
}
