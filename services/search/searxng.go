package search

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// SearXNG is the client of a self-hosted SearXNG instance's JSON API (the
// instance must allow format=json in its settings).
type SearXNG struct {
	// URL is the instance's base URL, for example http://searxng:8080.
	URL string
	// Client sends the requests. Default http.DefaultClient.
	Client *http.Client
}

// Name implements Provider.
func (s *SearXNG) Name() string { return "searxng" }

// searxngResponse is the part of SearXNG's answer the service reads.
type searxngResponse struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

// Search implements Provider. SearXNG has no count parameter: its first
// page is cut to count.
func (s *SearXNG) Search(ctx context.Context, query string, count int) ([]schemas.SearchResult, error) {
	if s.URL == "" {
		return nil, fmt.Errorf("searxng: no instance URL: set %s: %w", EnvSearXNGURL, ErrNotConfigured)
	}
	q := url.Values{"q": {query}, "format": {"json"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.URL, "/")+"/search?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("searxng: %w", err)
	}
	var r searxngResponse
	if err := getJSON(s.Client, req, "searxng", &r); err != nil {
		return nil, err
	}
	out := make([]schemas.SearchResult, 0, min(len(r.Results), count))
	for _, res := range r.Results {
		if len(out) == count {
			break
		}
		out = append(out, schemas.SearchResult{Title: res.Title, URL: res.URL, Snippet: res.Content})
	}
	return out, nil
}
