package web

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

type fetchArgs struct {
	URL            string `json:"url" jsonschema:"description=Absolute http or https URL of the page."`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"minimum=1,maximum=600,description=How long to wait for the page. Default: 30."`
}

func (w *Web) fetchMarkdown() tools.Tool {
	return tools.New(Family, "fetch_markdown",
		"Fetch one web page and return its main content as markdown (title, URL, then the content with navigation, headers, footers and scripts stripped; "+
			"tables, lists, links and code blocks kept). No JavaScript runs: use the browser tools for pages that build their content with scripts. "+
			"Markdown over the observation limit is written to a file in the workspace and the observation says where.",
		func(ctx context.Context, a fetchArgs) (tools.Result, error) {
			if err := checkURL(a.URL); err != nil {
				return tools.Result{}, err
			}
			ctx, cancel := context.WithTimeout(ctx, seconds(a.TimeoutSeconds, 30))
			defer cancel()
			final, body, err := w.get(ctx, a.URL)
			if err != nil {
				return tools.Result{}, err
			}
			page, err := toMarkdown(final, body)
			if err != nil {
				return tools.Result{}, err
			}
			return w.deliver("page", render([]Page{page}), 1)
		})
}

// get fetches rawURL and returns the URL it ended at after redirects and
// the body, which must be HTML and at most the page size limit. Errors are
// ErrUnreachable, ErrHTTPStatus, ErrNotHTML, ErrPageTooLarge, or a timeout.
func (w *Web) get(ctx context.Context, rawURL string) (string, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", rawURL, schemas.CodeInvalidArgs)
	}
	req.Header.Set("User-Agent", w.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5")
	resp, err := w.http.Do(req)
	if err != nil {
		return "", nil, classify(rawURL, err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL.String()
	if err := checkResponse(final, resp.StatusCode, resp.Header.Get("Content-Type"), resp.ContentLength, w.cfg.MaxPageBytes); err != nil {
		return "", nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, w.cfg.MaxPageBytes+1))
	if err != nil {
		return "", nil, classify(final, err)
	}
	if int64(len(body)) > w.cfg.MaxPageBytes {
		return "", nil, fmt.Errorf("%s: more than %d bytes: %w", final, w.cfg.MaxPageBytes, ErrPageTooLarge)
	}
	return final, body, nil
}

// checkResponse checks a response's status, content type and announced
// length before its body is read.
func checkResponse(u string, status int, contentType string, length, limit int64) error {
	if status >= 400 {
		return statusError(u, status)
	}
	if !isHTML(contentType) {
		return fmt.Errorf("%s: content type %q: %w", u, contentType, ErrNotHTML)
	}
	if length > limit {
		return fmt.Errorf("%s: %d bytes, the limit is %d: %w", u, length, limit, ErrPageTooLarge)
	}
	return nil
}

// isHTML reports whether a Content-Type names an HTML document. A missing
// type counts as HTML, as browsers sniff it.
func isHTML(contentType string) bool {
	if contentType == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// checkURL accepts absolute http and https URLs.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q: want an absolute http or https URL: %w", raw, schemas.CodeInvalidArgs)
	}
	return nil
}

// seconds returns n seconds, or def seconds when n is not positive.
func seconds(n, def int) time.Duration {
	if n <= 0 {
		n = def
	}
	return time.Duration(n) * time.Second
}

// slug makes a short file-name-safe word from s.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return strings.Trim(b.String(), "-")
}
