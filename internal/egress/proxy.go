package egress

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/elazarl/goproxy"
)

// Proxies runs one filtering proxy per sandbox, each on its own Unix
// socket in Dir. It is safe for concurrent use.
type Proxies struct {
	// Dir holds the sockets; the orchestrator binds each into its sandbox,
	// so it must be the same path on the Docker host.
	Dir string
	Log *slog.Logger

	mu   sync.Mutex
	open map[string]*http.Server
}

// SocketPath is where the proxy of a sandbox listens.
func (p *Proxies) SocketPath(sandboxID string) string {
	return filepath.Join(p.Dir, sandboxID+".sock")
}

// Open starts the proxy of a sandbox with its allowlist, replacing one
// already open, and returns its socket's path. The socket is connectable by
// every uid (0666): it is bound into that sandbox's container only.
func (p *Proxies) Open(sandboxID string, allow Allowlist) (string, error) {
	if err := p.Close(sandboxID); err != nil {
		return "", err
	}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return "", fmt.Errorf("egress: %w", err)
	}
	path := p.SocketPath(sandboxID)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return "", fmt.Errorf("egress proxy of sandbox %s: %w", sandboxID, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return "", fmt.Errorf("egress proxy of sandbox %s: %w", sandboxID, err)
	}
	srv := &http.Server{Handler: p.handler(sandboxID, allow)}
	p.mu.Lock()
	if p.open == nil {
		p.open = map[string]*http.Server{}
	}
	p.open[sandboxID] = srv
	p.mu.Unlock()
	go func() { _ = srv.Serve(ln) }() // ends when Close closes srv
	return path, nil
}

// Close stops the proxy of a sandbox and removes its socket; a sandbox
// without one is no error.
func (p *Proxies) Close(sandboxID string) error {
	p.mu.Lock()
	srv := p.open[sandboxID]
	delete(p.open, sandboxID)
	p.mu.Unlock()
	var err error
	if srv != nil {
		err = srv.Close()
	}
	if rerr := os.Remove(p.SocketPath(sandboxID)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

// handler is the goproxy server of one sandbox: a 403 for a destination
// that is not listed, and every connection dialled through the allowlist.
func (p *Proxies) handler(sandboxID string, allow Allowlist) http.Handler {
	gp := goproxy.NewProxyHttpServer()
	gp.Tr = &http.Transport{Proxy: nil, DialContext: allow.DialContext}
	gp.ConnectDial = func(network, addr string) (net.Conn, error) {
		return allow.DialContext(context.Background(), network, addr)
	}
	log := p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	gp.OnRequest().DoFunc(func(r *http.Request, _ *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		if allow.Allows(r.URL.Hostname()) {
			return r, nil
		}
		log.Info("egress refused", "sandbox", sandboxID, "host", r.URL.Host)
		return r, goproxy.NewResponse(r, goproxy.ContentTypeText, http.StatusForbidden,
			fmt.Sprintf("sandox egress: %s is %v\n", r.URL.Hostname(), ErrDenied))
	})
	gp.OnRequest().HandleConnectFunc(func(host string, _ *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		h, _, err := net.SplitHostPort(host)
		if err == nil && allow.Allows(h) {
			return goproxy.OkConnect, host
		}
		log.Info("egress refused", "sandbox", sandboxID, "host", host)
		return goproxy.RejectConnect, host
	})
	return gp
}
