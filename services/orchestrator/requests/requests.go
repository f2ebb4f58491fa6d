// Package requests answers the orchestrator's requests that need no work
// queue: a sandbox's or a group's recorded status, read from the state
// buckets, and a sandbox's live use, read from the engine of its host.
// Every worker serves them in the queue group schemas.RequestQueue, so
// each request is answered once.
package requests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// Timeout bounds the answer to one request.
const Timeout = 15 * time.Second

// Store reads the recorded sandboxes and groups. *state.Store implements
// it.
type Store interface {
	Sandbox(ctx context.Context, id string) (schemas.SandboxStatus, uint64, error)
	Group(ctx context.Context, id string) (schemas.GroupStatus, uint64, error)
}

// Hosts tells this worker's host from others and which are live.
// *placement.Hosts implements it.
type Hosts interface {
	Here(host string) bool
	Live(ctx context.Context, host string) bool
}

// Stats reads the live use of a sandbox of this host (the command's
// SandboxID). *sandboxes.Service implements it.
type Stats interface {
	Stats(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error)
}

// Config is what a Server reads of the worker's configuration.
type Config struct {
	// Worker names the worker in every reply.
	Worker string
	// Host is the worker's host: stats requests for its sandboxes come to
	// its workers on schemas.HostStatsSubject.
	Host string
}

// Server answers the requests. It is safe for concurrent use.
type Server struct {
	cfg   Config
	nc    *nats.Conn
	store Store
	hosts Hosts
	stats Stats
	log   *slog.Logger
}

// New returns a Server that answers on nc.
func New(cfg Config, nc *nats.Conn, store Store, hosts Hosts, stats Stats, log *slog.Logger) *Server {
	return &Server{cfg: cfg, nc: nc, store: store, hosts: hosts, stats: stats, log: log}
}

// Serve subscribes to the request subjects and answers until the returned
// stop is called. A stats request for a sandbox of another host is passed
// to that host's workers (schemas.HostStatsSubject, the same queue group)
// and their answer relayed, so that each request gets one answer, from a
// worker that can read the container. The handlers run on the
// subscriptions' own goroutines, owned by the NATS connection; stop drains
// the subscriptions and waits (up to Timeout) for the handlers in hand.
func (s *Server) Serve(ctx context.Context) (stop func(), err error) {
	handlers := []struct {
		subject string
		answer  func(ctx context.Context, id string) schemas.StatusReply
	}{
		{schemas.SandboxStatusSubject("*"), s.sandboxStatus},
		{schemas.GroupStatusSubject("*"), s.groupStatus},
		{schemas.SandboxStatsSubject("*"), s.sandboxStats},
		{schemas.HostStatsSubject(s.cfg.Host, "*"), s.localStats},
	}
	var subs []*nats.Subscription
	var closed []<-chan nats.SubStatus
	stop = func() {
		for _, sub := range subs {
			_ = sub.Drain()
		}
		// Drain returns at once; wait until the handlers in hand are done.
		timeout := time.After(Timeout)
		for _, c := range closed {
			select {
			case <-c:
			case <-timeout:
				s.log.Warn("request handlers still running after the drain timeout")
				return
			}
		}
	}
	for _, h := range handlers {
		sub, err := s.nc.QueueSubscribe(h.subject, schemas.RequestQueue, func(m *nats.Msg) {
			s.answer(ctx, m, h.answer)
		})
		if err != nil {
			stop()
			return nil, fmt.Errorf("subscribe to %s: %w", h.subject, err)
		}
		subs = append(subs, sub)
		closed = append(closed, sub.StatusChanged(nats.SubscriptionClosed))
	}
	if err := s.nc.Flush(); err != nil {
		stop()
		return nil, fmt.Errorf("flush request subscriptions: %w", err)
	}
	return stop, nil
}

// answer runs one request's handler on the id, the subject's last token,
// and replies with its StatusReply.
func (s *Server) answer(ctx context.Context, m *nats.Msg, handle func(context.Context, string) schemas.StatusReply) {
	id := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	var reply schemas.StatusReply
	if err := schemas.ValidateID("sandbox or group", id); err != nil {
		reply.Error = wire.Error(err)
	} else {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Timeout)
		reply = handle(rctx, id)
		cancel()
	}
	reply.Worker = s.cfg.Worker
	data, err := json.Marshal(reply)
	if err != nil {
		s.log.Error("encode request reply", "subject", m.Subject, "err", err)
		return
	}
	if err := m.Respond(data); err != nil && !errors.Is(err, nats.ErrMsgNoReply) {
		s.log.Warn("reply to request", "subject", m.Subject, "err", err)
	}
}
