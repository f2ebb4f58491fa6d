// Package egress is the filtering HTTP(S) proxy of sandboxes whose egress
// policy is an allowlist.
//
// A sandbox has no network. For the allowlist policy the orchestrator opens
// one proxy per sandbox (Proxies.Open), listening on a Unix socket that is
// bound into that sandbox alone; the executor forwards a loopback port to
// it, and HTTP_PROXY and HTTPS_PROXY point the sandbox's programs there. The
// proxy (github.com/elazarl/goproxy) checks every destination where it
// dials, after name resolution: a host name on the list may go wherever it
// resolves; any other name, or an address, only to IPs inside a listed CIDR.
package egress
