package schemas

// SearchSubject begins the subjects where the control plane's search
// service takes SearchRequests: each sandbox sends its own on
// SandboxSearchSubject, the only one its identity may publish to, so the
// service knows which sandbox asks (for its quota) without trusting what
// the request says. The executor's web_tools.web_search sends them; the
// service holds the providers' API keys, so no sandbox ever sees them.
const SearchSubject = "sandox.svc.search"

// SearchSubjects matches every sandbox's SandboxSearchSubject: what the
// search service subscribes to.
const SearchSubjects = SearchSubject + ".*"

// SandboxSearchSubject is where sandbox sandboxID asks the search service.
func SandboxSearchSubject(sandboxID string) string { return SearchSubject + "." + sandboxID }

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
