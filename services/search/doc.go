// Package search is the control plane's web search service. It answers
// schemas.SearchRequest on schemas.SearchSubject with results from a search
// provider (Brave Search, Google Programmable Search, SearXNG) behind one
// Provider interface. The providers' API keys live here, in the operator's
// environment, and never reach a sandbox: a sandbox's web_tools.web_search
// only sends the query over NATS.
package search
