package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/sandox/sandox/services/mcp"
)

// envMCPToken names the variable that may hold `sandox mcp --http`'s bearer
// token (a secret from the environment, never from code).
const envMCPToken = "SANDOX_MCP_TOKEN"

// httpGuard returns what wraps the MCP HTTP handler: a bearer-token check,
// unless noAuth is set for a loopback address. The token is token when
// set (from SANDOX_MCP_TOKEN), else the one in tokenFile, else the one in
// ~/.config/sandox/mcp.token, made there on first use. It logs where the
// token is, never the token.
func httpGuard(addr, tokenFile string, noAuth bool, token string, log *slog.Logger) (func(http.Handler) http.Handler, error) {
	if noAuth {
		if !loopbackAddr(addr) {
			return nil, fmt.Errorf("--no-auth on %s: only a loopback address may be served without a token", addr)
		}
		log.Warn("MCP over HTTP without a token: anyone on this machine can run tools in the sandbox", "addr", addr)
		return func(h http.Handler) http.Handler { return h }, nil
	}
	if token == "" {
		if tokenFile == "" {
			base, err := os.UserConfigDir()
			if err != nil {
				return nil, err
			}
			tokenFile = filepath.Join(base, "sandox", "mcp.token")
		}
		var created bool
		var err error
		if token, created, err = mcp.LoadOrCreateToken(tokenFile); err != nil {
			return nil, err
		}
		log.Info("MCP over HTTP needs \"Authorization: Bearer <token>\"", "token_file", tokenFile, "created", created)
	} else {
		log.Info("MCP over HTTP needs \"Authorization: Bearer <token>\"", "token", "$"+envMCPToken)
	}
	return mcp.RequireToken(token)
}

// loopbackAddr reports whether addr (host:port) listens on a loopback
// address only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
