package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// Token, when set, is wanted on every request (guard); serve on a
	// loopback address without one.
	Token string
	// Refresh is how often the live parts read the buckets and a
	// sandbox's use again; 2 s when zero.
	Refresh time.Duration
	// Timeout bounds every read from NATS for a page; 5 s when zero.
	Timeout time.Duration
	// Keep is how many of the newest audit entries the live feed keeps
	// for pages that open; 500 when zero.
	Keep int
	// NoUsage says the credentials may not ask the orchestrator for a
	// sandbox's live use (the audit role sends nothing): the pages say so
	// instead of asking.
	NoUsage bool
	// Logger receives the server's logs; discarded when nil.
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.Refresh <= 0 {
		o.Refresh = 2 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Keep <= 0 {
		o.Keep = 500
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Server is the dashboard of the sandox system behind one NATS connection.
// Its handler is safe for concurrent use; Run keeps its live feed.
type Server struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	opts  Options
	feed  *feed
	pages *pages
}

// New returns the dashboard of the system nc reaches. nc may be
// disconnected (nats.RetryOnFailedConnect): the pages then say that NATS is
// unreachable, and recover when it is back. New fails only when the
// embedded templates do not parse.
func New(nc *nats.Conn, opts Options) (*Server, error) {
	if nc == nil {
		return nil, errors.New("dashboard: no NATS connection")
	}
	opts.defaults()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	return &Server{nc: nc, js: js, opts: opts, feed: newFeed(js, opts.Keep, opts.Logger), pages: p}, nil
}

// Run follows the audit log for the live feed until ctx is done, reading
// it again whenever it cannot (NATS down, no stream yet). It blocks; run it
// once, beside serving Handler.
func (s *Server) Run(ctx context.Context) { s.feed.run(ctx) }

// Handler returns the dashboard's HTTP handler, guarded (see guard).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.FileServerFS(staticFS))
	mux.HandleFunc("GET /{$}", s.overview)
	mux.HandleFunc("GET /groups/{id}", s.group)
	mux.HandleFunc("GET /sandboxes/{id}", s.sandbox)
	mux.HandleFunc("GET /live/overview", s.liveOverview)
	mux.HandleFunc("GET /live/events", s.liveEvents)
	mux.HandleFunc("GET /live/sandboxes/{id}/usage", s.liveUsage)
	mux.HandleFunc("GET /live/groups/{id}/population", s.livePopulation)
	mux.HandleFunc("GET /", s.notFound)
	return guard(mux, s.opts.Token)
}

// readCtx bounds a read from NATS for one page.
func (s *Server) readCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.Timeout)
}
