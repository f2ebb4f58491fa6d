package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// Searcher answers search requests. In a sandbox it is a NATSSearcher that
// forwards them to the control plane's search service.
type Searcher interface {
	Search(ctx context.Context, req schemas.SearchRequest) (schemas.SearchResponse, error)
}

type searchArgs struct {
	Query    string `json:"query" jsonschema:"minLength=1,description=What to search the web for."`
	Count    int    `json:"count,omitempty" jsonschema:"minimum=1,maximum=50,description=How many results to return. Default: 10."`
	Provider string `json:"provider,omitempty" jsonschema:"enum=brave,enum=google,enum=searxng,description=The search provider to ask. Default: the one the operator configured as default."`
}

func (w *Web) webSearch() tools.Tool {
	return tools.New(Family, "web_search",
		"Search the web and return the most relevant pages with their titles, URLs and snippets. The search runs in the control plane "+
			"with the operator's API keys (Brave Search, Google Programmable Search or SearXNG); the sandbox never sees them.",
		func(ctx context.Context, a searchArgs) (tools.Result, error) {
			if w.cfg.Search == nil {
				return tools.Result{}, fmt.Errorf("web_search: %w", ErrNoSearch)
			}
			if a.Count == 0 {
				a.Count = 10
			}
			resp, err := w.cfg.Search.Search(ctx, schemas.SearchRequest{Query: a.Query, Count: a.Count, Provider: a.Provider})
			if err != nil {
				return tools.Result{}, fmt.Errorf("web_search %q: %w", a.Query, err)
			}
			if resp.Error != nil {
				return tools.Result{}, fmt.Errorf("web_search %q: %w", a.Query, resp.Error)
			}
			ret, err := json.Marshal(resp.Results)
			if err != nil {
				return tools.Result{}, fmt.Errorf("web_search: %w", err)
			}
			return tools.Result{Stdout: formatResults(resp), Return: ret}, nil
		})
}

// formatResults lists results as a numbered markdown list.
func formatResults(resp schemas.SearchResponse) string {
	if len(resp.Results) == 0 {
		return fmt.Sprintf("No results (provider %s).", resp.Provider)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d results (provider %s):\n", len(resp.Results), resp.Provider)
	for i, r := range resp.Results {
		fmt.Fprintf(&b, "\n%d. [%s](%s)\n", i+1, r.Title, r.URL)
		if r.Snippet != "" {
			fmt.Fprintf(&b, "   %s\n", r.Snippet)
		}
	}
	return b.String()
}
