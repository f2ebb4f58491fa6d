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

// GoogleEndpoint is Google's Custom Search JSON API (Programmable Search).
const GoogleEndpoint = "https://www.googleapis.com/customsearch/v1"

// Google is the Google Programmable Search (Custom Search JSON API) client.
type Google struct {
	// Endpoint is the API URL. Default GoogleEndpoint.
	Endpoint string
	// APIKey is the API key, sent as the key parameter.
	APIKey string
	// EngineID is the Programmable Search Engine id, the cx parameter.
	EngineID string
	// Client sends the requests. Default http.DefaultClient.
	Client *http.Client
}

// Name implements Provider.
func (g *Google) Name() string { return "google" }

// googleResponse is the part of Google's answer the service reads.
type googleResponse struct {
	Items []struct {
		Title   string `json:"title"`
		Link    string `json:"link"`
		Snippet string `json:"snippet"`
	} `json:"items"`
}

// Search implements Provider. Google returns at most 10 results a request,
// so larger counts take several pages (start=1, 11, …; the API stops at 100).
func (g *Google) Search(ctx context.Context, query string, count int) ([]schemas.SearchResult, error) {
	switch {
	case g.APIKey == "":
		return nil, fmt.Errorf("google: no API key: set %s or %s: %w", EnvGoogleKey, EnvGoogleKey+"_FILE", ErrNotConfigured)
	case g.EngineID == "":
		return nil, fmt.Errorf("google: no search engine id: set %s: %w", EnvGoogleCX, ErrNotConfigured)
	}
	var out []schemas.SearchResult
	for start := 1; len(out) < count && start <= 91; start += 10 {
		q := url.Values{"key": {g.APIKey}, "cx": {g.EngineID}, "q": {query},
			"num": {strconv.Itoa(min(count-len(out), 10))}, "start": {strconv.Itoa(start)}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cmp.Or(g.Endpoint, GoogleEndpoint)+"?"+q.Encode(), nil)
		if err != nil {
			return nil, fmt.Errorf("google: %w", err)
		}
		var r googleResponse
		if err := getJSON(g.Client, req, "google", &r); err != nil {
			return nil, err
		}
		for _, it := range r.Items {
			out = append(out, schemas.SearchResult{Title: it.Title, URL: it.Link, Snippet: it.Snippet})
		}
		if len(r.Items) < 10 {
			break
		}
	}
	return out, nil
}
