package schemas

// SearchSubject is where the control plane's search service takes
// SearchRequests. The executor's web_tools.web_search sends them; the
// service holds the providers' API keys, so no sandbox ever sees them.
const SearchSubject = "sandox.svc.search"

// SearchRequest asks the search service for the most relevant pages for a
// query.
type SearchRequest struct {
	// Query is what to search for.
	Query string `json:"query"`
	// Count is how many results to return; zero means the service's default.
	Count int `json:"count,omitempty"`
	// Provider names the provider to ask (brave, google, searxng); empty
	// means the service's default provider.
	Provider string `json:"provider,omitempty"`
}

// SearchResult is one page a search found.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

// SearchResponse is the search service's answer: the results, most relevant
// first, or an error.
type SearchResponse struct {
	Provider string         `json:"provider,omitempty"`
	Results  []SearchResult `json:"results"`
	Error    *Error         `json:"error,omitempty"`
}
