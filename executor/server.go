package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/executor/limits"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// Config configures a Server.
type Config struct {
	// SandboxID is the sandbox this executor serves.
	SandboxID string
	// ActionTimeout bounds one action; 0 means 10 minutes.
	ActionTimeout time.Duration
	// QueueLength bounds the batches waiting to run; more are refused with
	// CodeResourceExhausted. 0 means 64.
	QueueLength int
	// Limits watches the sandbox's limits: its hits go into observations,
	// its disk figure answers the stats subject, and notices are queued on
	// it. nil means none of that: observations carry no limit hits, and
	// stats and notices are answered with an error.
	Limits *limits.Watcher
	// WatchWorkspace, when set, is the workspace directory: after each
	// batch the server compares its metadata with what it was before
	// (workspaceFingerprint) and sets BatchResult.WorkspaceChanged.
	WatchWorkspace string
}

var _ LimitChecker = (*limits.Watcher)(nil)

// Server serves one sandbox's subjects. Create it with NewServer and run it
// with Serve.
type Server struct {
	cfg Config
	nc  *nats.Conn
	reg *tools.Registry
	log *slog.Logger
	// workspace is the last fingerprint of cfg.WatchWorkspace; only the
	// batch loop of Serve touches it.
	workspace uint64
}

// NewServer returns a server for the sandbox cfg.SandboxID that runs tools
// from reg over nc.
func NewServer(nc *nats.Conn, reg *tools.Registry, cfg Config, log *slog.Logger) *Server {
	if cfg.ActionTimeout == 0 {
		cfg.ActionTimeout = 10 * time.Minute
	}
	if cfg.QueueLength == 0 {
		cfg.QueueLength = 64
	}
	return &Server{cfg: cfg, nc: nc, reg: reg, log: log.With("sandbox", cfg.SandboxID)}
}

// Serve subscribes to the sandbox's subjects and runs action batches until
// ctx is done; then it stops taking batches, finishes the one running, and
// returns. It returns an error only when it cannot subscribe.
func (s *Server) Serve(ctx context.Context) error {
	id := s.cfg.SandboxID
	if err := schemas.ValidateID("sandbox", id); err != nil {
		return err
	}
	batches := make(chan *nats.Msg, s.cfg.QueueLength)
	queue := func(m *nats.Msg) {
		s.takeBatch(m)
		select {
		case batches <- m:
		default:
			s.replyError(m, schemas.Errorf(schemas.CodeResourceExhausted, "sandbox %s has %d batches waiting; try again later", id, s.cfg.QueueLength))
		}
	}
	served := &subjects{nc: s.nc, handlers: []handler{
		{schemas.ActionsSubject(id), queue},
		{schemas.ToolsSubject(id), s.serveTools},
		{schemas.StatsSubject(id), s.serveStats},
		{schemas.NoticeSubject(id), s.serveNotice},
		// Last: an answer means every other subject is served.
		{schemas.PingSubject(id), s.servePing},
	}}
	// The hold subject stays served while the others are held (hold.go).
	hold, err := s.nc.Subscribe(schemas.HoldSubject(id), served.serveHold)
	if err != nil {
		return fmt.Errorf("subscribe to %s: %w", schemas.HoldSubject(id), err)
	}
	defer hold.Unsubscribe()
	if err := served.subscribe(); err != nil {
		return err
	}
	defer served.close()
	s.announceReady()
	// What starting allocated (the decoded environment and credentials,
	// the connection's handshake) is garbage now: give it back, so that an
	// idle sandbox holds only what it serves with.
	debug.FreeOSMemory()
	s.log.Info("executor serving", "subject", schemas.ActionsSubject(id), "tools", s.reg.String())

	if s.cfg.WatchWorkspace != "" {
		s.workspace = workspaceFingerprint(s.cfg.WatchWorkspace)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-batches:
			// A batch already taken runs to the end even when ctx ends, so
			// that its requester gets an answer.
			s.serveBatch(context.WithoutCancel(ctx), m)
		}
	}
}

func (s *Server) serveBatch(ctx context.Context, m *nats.Msg) {
	res := schemas.BatchResult{
		BatchID:      m.Header.Get(schemas.HeaderBatchID),
		SandboxID:    s.cfg.SandboxID,
		Observations: []schemas.Observation{},
	}
	actions, err := schemas.ParseActions(m.Data)
	if err != nil {
		res.Error = schemas.Errorf(schemas.CodeBadRequest, "%w", err)
	} else {
		stop, _ := strconv.ParseBool(m.Header.Get(schemas.HeaderStopOnError))
		start := time.Now()
		var lc LimitChecker
		if s.cfg.Limits != nil {
			lc = s.cfg.Limits
		}
		res.Observations = RunBatch(ctx, s.reg, lc, actions, stop, s.cfg.ActionTimeout)
		if s.cfg.WatchWorkspace != "" {
			fp := workspaceFingerprint(s.cfg.WatchWorkspace)
			res.WorkspaceChanged, s.workspace = fp != s.workspace, fp
		}
		s.log.Debug("batch done", "batch", res.BatchID, "actions", len(actions), "took", time.Since(start))
	}
	s.reply(m, res)
}

func (s *Server) replyError(m *nats.Msg, e *schemas.Error) {
	s.reply(m, schemas.BatchResult{
		BatchID:      m.Header.Get(schemas.HeaderBatchID),
		SandboxID:    s.cfg.SandboxID,
		Observations: []schemas.Observation{},
		Error:        e,
	})
}

// reply sends the answer to a batch to its reply subject, if it has one,
// and records it (recordObservations).
func (s *Server) reply(m *nats.Msg, res schemas.BatchResult) {
	data, err := fitPayload(res, s.nc.MaxPayload())
	if err != nil {
		s.log.Error("encode observations", "err", err)
		return
	}
	if m.Reply == "" {
		s.log.Info("action batch without a reply subject; observations only recorded", "batch", res.BatchID)
	} else if err := m.Respond(data); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		s.log.Error("send observations", "batch", res.BatchID, "err", err)
	}
	s.recordObservations(m, res.BatchID, data)
}

// servePing answers that the executor is ready, with the tool modules it
// serves (schemas.ExecutorReady).
func (s *Server) servePing(m *nats.Msg) {
	s.respondJSON(m, s.readiness())
}

// readiness is the answer to a ping and the ready announcement: the tool
// modules the executor serves.
func (s *Server) readiness() schemas.ExecutorReady {
	return schemas.ExecutorReady{Modules: s.reg.Modules()}
}

// announceReady publishes the ping's answer once on schemas.ReadySubject,
// where the orchestrator waits for it, so that a start needs no poll. It
// is sent after the subscriptions are flushed: whoever gets it can send a
// batch at once. A failure is logged; the orchestrator still pings.
func (s *Server) announceReady() {
	data, err := json.Marshal(s.readiness())
	if err == nil {
		err = s.nc.Publish(schemas.ReadySubject(s.cfg.SandboxID), data)
	}
	if err != nil {
		s.log.Warn("announce readiness", "err", err)
	}
}

func (s *Server) serveTools(m *nats.Msg) {
	s.respondJSON(m, s.reg.Describe())
}

// respondJSON answers a request with v encoded as JSON; an error answer is
// a *schemas.Error, {"code": ..., "message": ...}.
func (s *Server) respondJSON(m *nats.Msg, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encode reply", "subject", m.Subject, "err", err)
		return
	}
	if err := m.Respond(data); err != nil && !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrMsgNoReply) {
		s.log.Error("reply", "subject", m.Subject, "err", err)
	}
}
