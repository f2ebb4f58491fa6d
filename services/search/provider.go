package search

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// Provider is one search API.
type Provider interface {
	// Name is the provider's name in requests: "brave", "google", "searxng".
	Name() string
	// Search returns up to count results for query, most relevant first.
	Search(ctx context.Context, query string, count int) ([]schemas.SearchResult, error)
}

// The error classes of the search service.
var (
	// ErrNotConfigured: the provider has no API key or endpoint set.
	ErrNotConfigured = errors.New("search provider not configured")
	// ErrUnknownProvider: the request names no provider the service knows.
	ErrUnknownProvider = errors.New("unknown search provider")
	// ErrProvider: the provider answered with an error.
	ErrProvider = errors.New("search provider error")
	// ErrQuota: the sandbox sent more searches than its quota allows.
	ErrQuota = errors.New("search quota spent")
)

// getJSON sends req with client (http.DefaultClient when nil) and decodes
// the body of a 2xx answer into v. Any other status is ErrProvider with the
// status and the start of the body, which is where the providers put their
// reason; a body that does not decode is ErrProvider too.
func getJSON(client *http.Client, req *http.Request, provider string, v any) error {
	req.Header.Set("Accept", "application/json")
	resp, err := cmp.Or(client, http.DefaultClient).Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", provider, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("%s: read answer: %w", provider, err)
	}
	if resp.StatusCode/100 != 2 {
		reason := strings.TrimSpace(string(body))
		if len(reason) > 300 {
			reason = reason[:300] + "…"
		}
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = " (the API key was refused)"
		}
		return fmt.Errorf("%s: HTTP %d%s: %s: %w", provider, resp.StatusCode, hint, reason, ErrProvider)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: decode answer: %w: %w", provider, err, ErrProvider)
	}
	return nil
}
