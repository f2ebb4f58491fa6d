// Package web is the web_tools family that runs inside a sandbox: it turns
// web pages into markdown (fetch_markdown for one page, scrape_website for
// a crawl with gocolly/colly), drives the distribution's Chromium through
// go-rod/rod for pages that need a browser (a session that keeps its
// cookies and current page across actions), and forwards web_search to the
// control plane's search service, which holds the API keys.
//
// Every outgoing request honours the standard proxy environment variables
// (HTTP_PROXY, HTTPS_PROXY, NO_PROXY), which is how the sandbox's egress
// policy reaches these tools.
package web
