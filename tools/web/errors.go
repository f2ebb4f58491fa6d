package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// The error classes of the web tools. Each wraps the tools class that gives
// its wire code, so callers can match either.
var (
	// ErrUnreachable: the host did not resolve or refused the connection.
	ErrUnreachable = errors.New("host unreachable")
	// ErrHTTPStatus: the server answered with a 4xx or 5xx status.
	ErrHTTPStatus = errors.New("HTTP error status")
	// ErrNotHTML: the URL serves something other than an HTML page.
	ErrNotHTML = fmt.Errorf("not an HTML page: %w", schemas.CodeUnsupported)
	// ErrPageTooLarge: the page is over the size limit.
	ErrPageTooLarge = fmt.Errorf("page over the size limit: %w", tools.ErrTooLarge)
	// ErrNoBrowser: Chromium is not installed in this sandbox.
	ErrNoBrowser = fmt.Errorf("no browser in this sandbox: %w", schemas.CodeUnsupported)
	// ErrNoSearch: this sandbox has no way to reach the search service.
	ErrNoSearch = fmt.Errorf("no search service: %w", schemas.CodeUnsupported)
)

// statusError is ErrHTTPStatus for an answer with status from u, naming
// the status and its reason phrase.
func statusError(u string, status int) error {
	return fmt.Errorf("%s: %d %s: %w", u, status, http.StatusText(status), ErrHTTPStatus)
}

// classify turns a transport error for rawURL into one of the web error
// classes, keeping the cause: a passed deadline stays
// context.DeadlineExceeded (the timeout code), a failed lookup or refused
// connection becomes ErrUnreachable.
func classify(rawURL string, err error) error {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var urlErr *url.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &urlErr) && urlErr.Timeout():
		return fmt.Errorf("%s: no answer in time: %w", rawURL, context.DeadlineExceeded)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", rawURL, err)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("%s: name %q does not resolve: %w", rawURL, dnsErr.Name, ErrUnreachable)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%s: connection refused: %w", rawURL, ErrUnreachable)
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return fmt.Errorf("%s: no route to host: %w", rawURL, ErrUnreachable)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return fmt.Errorf("%s: %v: %w", rawURL, opErr.Err, ErrUnreachable)
	default:
		return fmt.Errorf("%s: %w", rawURL, err)
	}
}
