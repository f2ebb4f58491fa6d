package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Opener makes a sandbox for one MCP session. Open blocks until the sandbox
// runs and returns it with the func that ends it.
type Opener interface {
	Open(ctx context.Context) (sb Sandbox, end func(context.Context) error, err error)
}

// PerSession gives each MCP session a sandbox of its own: it opens one when
// a session starts and ends it when the session ends (the client closes it,
// the HTTP session times out, or stdin reaches its end). It is safe for
// concurrent use. Close ends what is still open.
//
// Lock order: PerSession.mu, then nothing.
type PerSession struct {
	open Opener
	opts Options

	mu     sync.Mutex
	live   map[*sdkmcp.Server]*liveSandbox
	closed bool
	wg     sync.WaitGroup // one per session watcher
}

// liveSandbox is a sandbox opened for a session; end runs once.
type liveSandbox struct {
	id      string
	once    sync.Once
	end     func(context.Context) error
	watched bool
}

// ErrClosed reports a PerSession that no longer opens sandboxes.
var ErrClosed = errors.New("mcp: closed")

// NewPerSession returns a PerSession that opens sandboxes with open. Its
// servers speak only the protocol versions that have sessions
// (SessionProtocolVersions) unless o.ProtocolVersions says otherwise.
func NewPerSession(open Opener, o Options) *PerSession {
	if len(o.ProtocolVersions) == 0 {
		o.ProtocolVersions = SessionProtocolVersions()
	}
	return &PerSession{open: open, opts: o, live: map[*sdkmcp.Server]*liveSandbox{}}
}

// statelessProtocol is the first MCP protocol version without sessions
// (SEP-2575: server/discover instead of initialize, no Mcp-Session-Id).
const statelessProtocol = "2026-07-28"

// SessionProtocolVersions returns the MCP protocol versions the SDK speaks
// that still have sessions (before 2026-07-28). A sandbox per session needs
// a session to know when to end it, so PerSession offers only these; a
// newer client falls back to them after its server/discover is refused.
func SessionProtocolVersions() []string {
	var out []string
	for _, v := range sdkmcp.SupportedProtocolVersions() {
		if v < statelessProtocol {
			out = append(out, v)
		}
	}
	return out
}

// Run opens a sandbox, serves it over t (for example &mcp.StdioTransport{})
// until the client disconnects or ctx ends, then ends the sandbox. It
// returns the error of serving or of ending, joined.
func (p *PerSession) Run(ctx context.Context, t sdkmcp.Transport) error {
	srv, err := p.newServer(ctx, false)
	if err != nil {
		return err
	}
	runErr := srv.Run(ctx, t)
	return errors.Join(runErr, p.end(context.WithoutCancel(ctx), srv))
}

// Handler returns the streamable HTTP handler of the SDK, set up so that
// each new session (a POST without an Mcp-Session-Id header) gets a sandbox
// of its own. When no sandbox can be opened the request is answered 503 with
// the reason. A sandbox whose request did not start a session is ended at
// once.
func (p *PerSession) Handler(o *sdkmcp.StreamableHTTPOptions) http.Handler {
	// The SDK asks getServer on every request, also to check the protocol
	// version of requests in existing sessions; those get a server without
	// tools, which never serves a session.
	// A stateless request (a newer client's server/discover) goes there too,
	// and is refused with the versions that have sessions.
	versions := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "sandox", Version: "dev"}, &sdkmcp.ServerOptions{
		Logger:                    p.opts.logger(),
		SupportedProtocolVersions: p.opts.ProtocolVersions,
	})
	h := sdkmcp.NewStreamableHTTPHandler(func(r *http.Request) *sdkmcp.Server {
		if srv, ok := r.Context().Value(serverKey{}).(*sdkmcp.Server); ok {
			return srv
		}
		return versions
	}, o)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get(sessionIDHeader) != "" || r.Header.Get(protocolHeader) >= statelessProtocol {
			h.ServeHTTP(w, r)
			return
		}
		srv, err := p.newServer(r.Context(), true)
		if err != nil {
			p.opts.logger().Error("open a sandbox for an MCP session", "err", err)
			http.Error(w, "sandox: open a sandbox for this session: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), serverKey{}, srv)))
		if !p.watched(srv) {
			if err := p.end(context.WithoutCancel(r.Context()), srv); err != nil {
				p.opts.logger().Error("end the sandbox of a session that did not start", "err", err)
			}
		}
	})
}

// sessionIDHeader is the streamable HTTP transport's session header.
const sessionIDHeader = "Mcp-Session-Id"

// protocolHeader carries the request's MCP protocol version.
const protocolHeader = "Mcp-Protocol-Version"

type serverKey struct{}

// watched reports whether a session of srv started its watcher.
func (p *PerSession) watched(srv *sdkmcp.Server) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	ls := p.live[srv]
	return ls == nil || ls.watched
}

// newServer opens a sandbox and builds its server. With watch, the first
// request of the server's session starts a watcher that ends the sandbox
// when that session ends.
func (p *PerSession) newServer(ctx context.Context, watch bool) (*sdkmcp.Server, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	sb, end, err := p.open.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("open sandbox: %w", err)
	}
	srv, err := NewServer(ctx, sb, p.opts)
	if err != nil {
		return nil, errors.Join(err, end(context.WithoutCancel(ctx)))
	}
	ls := &liveSandbox{id: sb.ID(), end: end}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.Join(ErrClosed, end(context.WithoutCancel(ctx)))
	}
	p.live[srv] = ls
	p.mu.Unlock()
	p.opts.logger().Info("sandbox opened for an MCP session", "sandbox", ls.id)
	if watch {
		srv.AddReceivingMiddleware(p.watchSession(srv))
	}
	return srv, nil
}

// watchSession returns a middleware that, on the first request of a
// session, starts the goroutine that ends the sandbox once the session is
// over. A session is created by its first request, so nothing is missed.
func (p *PerSession) watchSession(srv *sdkmcp.Server) sdkmcp.Middleware {
	return func(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
		return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
			if ss, ok := req.GetSession().(*sdkmcp.ServerSession); ok {
				p.mu.Lock()
				ls := p.live[srv]
				start := ls != nil && !ls.watched && !p.closed
				if start {
					ls.watched = true
					p.wg.Add(1)
				}
				p.mu.Unlock()
				if start {
					go func() {
						defer p.wg.Done()
						_ = ss.Wait()
						if err := p.end(context.WithoutCancel(ctx), srv); err != nil {
							p.opts.logger().Error("end the sandbox of a closed MCP session", "sandbox", ls.id, "err", err)
						}
					}()
				}
			}
			return next(ctx, method, req)
		}
	}
}

// end ends the sandbox of srv, once; a second caller waits for the first.
// The sandbox counts as open (Open) until it has ended.
func (p *PerSession) end(ctx context.Context, srv *sdkmcp.Server) error {
	p.mu.Lock()
	ls := p.live[srv]
	p.mu.Unlock()
	if ls == nil {
		return nil
	}
	var err error
	ls.once.Do(func() {
		err = ls.end(ctx)
		p.opts.logger().Info("sandbox of an MCP session ended", "sandbox", ls.id, "err", err)
	})
	p.mu.Lock()
	delete(p.live, srv)
	p.mu.Unlock()
	return err
}

// Close stops opening sandboxes, closes the sessions still open, ends their
// sandboxes and waits for the session watchers. It returns the errors of
// ending, joined.
func (p *PerSession) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	servers := make([]*sdkmcp.Server, 0, len(p.live))
	for srv := range p.live {
		servers = append(servers, srv)
	}
	p.mu.Unlock()
	var errs []error
	for _, srv := range servers {
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
		errs = append(errs, p.end(ctx, srv))
	}
	p.wg.Wait()
	return errors.Join(errs...)
}

// Open returns the number of sandboxes opened and not yet ended.
func (p *PerSession) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.live)
}
