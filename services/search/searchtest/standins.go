// Package searchtest serves stand-ins for the hosted search APIs, which the
// test machines cannot reach. Each stand-in checks the request the way the
// real API does (key, engine id, format) and answers in that API's real
// response format, with results made from the query, so a test can tell
// the providers apart and see that the query got through.
package searchtest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Key is the API key the stand-ins accept; EngineID is Google's cx.
const (
	Key      = "test-key-not-a-secret"
	EngineID = "test-engine"
)

// Result is what the stand-ins answer for a query: result i (from 1) of
// provider p has the title "p result i for QUERY", the URL
// https://example.test/p/i?q=QUERY (never fetched) and a snippet.
func Result(p string, i int, query string) (title, url, snippet string) {
	return fmt.Sprintf("%s result %d for %s", p, i, query),
		fmt.Sprintf("https://example.test/%s/%d?q=%s", p, i, query),
		fmt.Sprintf("Snippet %d about %s.", i, query)
}

// BraveStandIn answers like GET /res/v1/web/search of the Brave Search API:
// X-Subscription-Token must be Key, count results (default 20 there, 5 here
// when absent), {"type":"search","web":{"type":"search","results":[…]}}.
func BraveStandIn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != Key {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"type":"ErrorResponse","error":{"id":"x","status":401,"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid."},"time":1}`)
			return
		}
		q := r.URL.Query().Get("q")
		n := atoiOr(r.URL.Query().Get("count"), 5)
		results := []map[string]any{}
		for i := 1; i <= n; i++ {
			title, url, snippet := Result("brave", i, q)
			results = append(results, map[string]any{
				"type": "search_result", "title": title, "url": url,
				"description": "<strong>" + snippet + "</strong>", "is_source_local": false, "language": "en",
				"meta_url": map[string]any{"scheme": "https", "netloc": "example.test", "hostname": "example.test"},
			})
		}
		writeJSON(w, map[string]any{
			"type":  "search",
			"query": map[string]any{"original": q, "more_results_available": false},
			"web":   map[string]any{"type": "search", "results": results, "family_friendly": true},
		})
	})
}

// GoogleStandIn answers like GET /customsearch/v1 of the Custom Search JSON
// API: key must be Key and cx EngineID, num at most 10, start from 1;
// {"kind":"customsearch#search","items":[…]}. It has 25 results in all.
func GoogleStandIn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.URL.Query()
		if v.Get("key") != Key {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","errors":[{"message":"API key not valid. Please pass a valid API key.","domain":"global","reason":"badRequest"}],"status":"INVALID_ARGUMENT"}}`)
			return
		}
		if v.Get("cx") != EngineID {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}`)
			return
		}
		num, start := atoiOr(v.Get("num"), 10), atoiOr(v.Get("start"), 1)
		if num > 10 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}`)
			return
		}
		items := []map[string]any{}
		for i := start; i < start+num && i <= 25; i++ {
			title, url, snippet := Result("google", i, v.Get("q"))
			items = append(items, map[string]any{
				"kind": "customsearch#result", "title": title, "htmlTitle": "<b>" + title + "</b>",
				"link": url, "displayLink": "example.test", "snippet": snippet, "htmlSnippet": snippet,
			})
		}
		writeJSON(w, map[string]any{
			"kind":              "customsearch#search",
			"url":               map[string]any{"type": "application/json"},
			"searchInformation": map[string]any{"searchTime": 0.1, "totalResults": "25"},
			"items":             items,
		})
	})
}

// SearXNGStandIn answers like GET /search?format=json of a SearXNG
// instance: {"query":…,"number_of_results":…,"results":[…]} with 8
// results; without format=json it answers 403 as an instance that has not
// enabled the JSON format does.
func SearXNGStandIn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		q := r.URL.Query().Get("q")
		results := []map[string]any{}
		for i := 1; i <= 8; i++ {
			title, url, snippet := Result("searxng", i, q)
			results = append(results, map[string]any{
				"url": url, "title": title, "content": snippet, "engine": "duckduckgo",
				"engines": []string{"duckduckgo"}, "positions": []int{i}, "score": 1.0 / float64(i), "category": "general",
			})
		}
		writeJSON(w, map[string]any{
			"query": q, "number_of_results": 0, "results": results,
			"answers": []any{}, "corrections": []any{}, "infoboxes": []any{}, "suggestions": []any{}, "unresponsive_engines": []any{},
		})
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func atoiOr(s string, def int) int {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
		return def
	}
	return n
}
