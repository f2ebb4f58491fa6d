package search

import (
	"html"
	"net/http"
	"regexp"
)

var tag = regexp.MustCompile(`<[^>]*>`)

// stripTags removes the markup Brave puts in descriptions (<strong>) and
// unescapes entities.
func stripTags(s string) string { return html.UnescapeString(tag.ReplaceAllString(s, "")) }

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func clientOr(c *http.Client) *http.Client {
	if c == nil {
		return http.DefaultClient
	}
	return c
}
