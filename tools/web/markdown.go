package web

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/PuerkitoBio/goquery"
)

// boilerplate selects the parts of a page that are not its content:
// navigation, page headers and footers, scripts and styles, asides and
// elements that say they play one of those roles.
const boilerplate = "script, style, noscript, template, iframe, svg, nav, header, footer, aside, " +
	"button, select, input, textarea, [role=navigation], [role=banner], [role=contentinfo], [role=complementary], [aria-hidden=true]"

// mainContent selects, in order of preference, the element that holds a
// page's main content; when none matches, the body is used.
var mainContent = []string{"main", "[role=main]", "article"}

// Page is one web page turned into markdown.
type Page struct {
	URL      string
	Title    string
	Markdown string
}

// newConverter returns an HTML-to-markdown converter that keeps tables.
func newConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
	))
}

// toMarkdown turns an HTML document into a Page: its title and its main
// content as markdown, with boilerplate stripped and links made absolute
// against pageURL.
func toMarkdown(pageURL string, html []byte) (Page, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if err != nil {
		return Page{}, fmt.Errorf("parse HTML of %s: %w", pageURL, err)
	}
	return docToMarkdown(pageURL, doc)
}

// docToMarkdown is toMarkdown on a parsed document. It changes doc.
func docToMarkdown(pageURL string, doc *goquery.Document) (Page, error) {
	title := strings.TrimSpace(doc.Find("title").First().Text())
	if title == "" {
		title = strings.TrimSpace(doc.Find("h1").First().Text())
	}
	doc.Find(boilerplate).Remove()
	content := doc.Find("body")
	for _, sel := range mainContent {
		if m := doc.Find(sel); m.Length() > 0 {
			content = m.First()
			break
		}
	}
	if content.Length() == 0 {
		content = doc.Selection
	}
	md, err := newConverter().ConvertNode(content.Nodes[0], converter.WithDomain(pageURL))
	if err != nil {
		return Page{}, fmt.Errorf("convert %s to markdown: %w", pageURL, err)
	}
	return Page{URL: pageURL, Title: title, Markdown: strings.TrimSpace(string(md))}, nil
}

// render writes pages as one markdown document: per page a level-one
// heading with its title, a line with its URL, then its content.
func render(pages []Page) string {
	var b strings.Builder
	for i, p := range pages {
		if i > 0 {
			b.WriteString("\n\n---\n\n")
		}
		title := p.Title
		if title == "" {
			title = p.URL
		}
		// The page's own top heading usually repeats its title.
		body := strings.TrimPrefix(p.Markdown, "# "+title+"\n")
		if body == "# "+title {
			body = ""
		}
		fmt.Fprintf(&b, "# %s\n\nURL: %s\n\n%s\n", title, p.URL, strings.TrimSpace(body))
	}
	return b.String()
}
