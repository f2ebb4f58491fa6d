package search

import (
	"html"
	"regexp"
)

var tag = regexp.MustCompile(`<[^>]*>`)

// stripTags removes the markup Brave puts in descriptions (<strong>) and
// unescapes entities.
func stripTags(s string) string { return html.UnescapeString(tag.ReplaceAllString(s, "")) }
