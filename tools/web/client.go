package web

import (
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// newTransport returns the HTTP transport every web tool uses. It takes its
// proxy from HTTP_PROXY, HTTPS_PROXY and NO_PROXY as they are when it is
// made (http.ProxyFromEnvironment would read them once per process), so the
// tools go through the sandbox's egress proxy when one is set.
func newTransport() *http.Transport {
	proxy := httpproxy.FromEnvironment().ProxyFunc()
	return &http.Transport{
		Proxy:                 func(r *http.Request) (*url.URL, error) { return proxy(r.URL) },
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
}
