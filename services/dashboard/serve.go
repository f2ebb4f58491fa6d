package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Serve serves the dashboard on ln and runs its live feed until ctx is
// done, then shuts the server down (waiting up to 5 s for open requests)
// and returns nil. It refuses, closing ln, to serve without a token on an
// address that is not loopback: `sandox dashboard` and the sandox-dashboard
// container both serve through it.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.opts.Token == "" && !loopback(ln.Addr().String()) {
		return errors.Join(fmt.Errorf("dashboard on %s: an address that is not loopback wants a token", ln.Addr()), ln.Close())
	}
	// The feed and the shutdown end with ctx, or when serving fails.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shut)
	}()
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-stopped
		err = nil
	}
	cancel()
	<-done
	return err
}

// ListenAndServe listens on addr (host:port) and serves the dashboard
// there as Serve does, logging where.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	s.opts.Logger.Info("dashboard serving", "addr", ln.Addr().String(), "token", s.opts.Token != "")
	return s.Serve(ctx, ln)
}
