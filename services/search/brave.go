package search

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/sandox/sandox/schemas"
)

// BraveEndpoint is Brave Search's web search API.
const BraveEndpoint = "https://api.search.brave.com/res/v1/web/search"

// Brave is the Brave Search API client.
type Brave struct {
	// Endpoint is the API URL. Default BraveEndpoint.
	Endpoint string
	// APIKey is the subscription token, sent as X-Subscription-Token.
	APIKey string
	// Client sends the requests. Default http.DefaultClient.
	Client *http.Client
}

// Name implements Provider.
func (b *Brave) Name() string { return "brave" }

// braveResponse is the part of Brave's answer the service reads.
type braveResponse struct {
	Web struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
		} `json:"results"`
	} `json:"web"`
}

// Search implements Provider. Brave returns at most 20 results a request.
func (b *Brave) Search(ctx context.Context, query string, count int) ([]schemas.SearchResult, error) {
	if b.APIKey == "" {
		return nil, fmt.Errorf("brave: no API key: set %s or %s: %w", EnvBraveKey, EnvBraveKey+"_FILE", ErrNotConfigured)
	}
	q := url.Values{"q": {query}, "count": {strconv.Itoa(min(count, 20))}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cmp.Or(b.Endpoint, BraveEndpoint)+"?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("brave: %w", err)
	}
	req.Header.Set("X-Subscription-Token", b.APIKey)
	var r braveResponse
	if err := getJSON(b.Client, req, "brave", &r); err != nil {
		return nil, err
	}
	out := make([]schemas.SearchResult, 0, len(r.Web.Results))
	for _, res := range r.Web.Results {
		out = append(out, schemas.SearchResult{Title: res.Title, URL: res.URL, Snippet: stripTags(res.Description)})
	}
	return out, nil
}
