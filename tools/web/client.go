package web

import (
	"net"
	"net/http"
	"time"
)

// newTransport returns the HTTP transport every web tool uses. It takes its
// proxy from HTTP_PROXY, HTTPS_PROXY and NO_PROXY, so the tools go through
// the sandbox's egress proxy when one is set.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
}
