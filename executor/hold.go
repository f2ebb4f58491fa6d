package executor

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// handler is a subject the executor serves and its handler.
type handler struct {
	subject string
	handle  nats.MsgHandler
}

// subjects are the sandbox's served subjects, which the orchestrator can
// hold around a pause (schemas.HoldSubject): held, the executor
// unsubscribes from all of them, so that a batch sent to the paused
// sandbox meets no responder at once instead of waiting in a frozen
// process; released, it subscribes again. Batches taken before the hold
// stay queued and run after the resume. It is safe for concurrent use.
type subjects struct {
	nc       *nats.Conn
	handlers []handler

	mu   sync.Mutex
	subs []*nats.Subscription // nil while held
}

// subscribe subscribes to every subject, in order, and flushes, so that
// the server has them all when it returns.
func (s *subjects) subscribe() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subscribeLocked()
}

func (s *subjects) subscribeLocked() error {
	if s.subs != nil {
		// Served already (a repeated request): the flush still makes sure
		// the server has them, for example after a reconnect.
		return s.nc.Flush()
	}
	subs := make([]*nats.Subscription, 0, len(s.handlers))
	for _, h := range s.handlers {
		sub, err := s.nc.Subscribe(h.subject, h.handle)
		if err != nil {
			for _, done := range subs {
				_ = done.Unsubscribe()
			}
			return fmt.Errorf("subscribe to %s: %w", h.subject, err)
		}
		subs = append(subs, sub)
	}
	s.subs = subs
	if err := s.nc.Flush(); err != nil {
		return fmt.Errorf("flush subscriptions: %w", err)
	}
	return nil
}

// close drops every subscription without waiting for the server: the
// executor is stopping, and its connection may be gone already (its
// identity revoked), where a flush would wait for its timeout.
func (s *subjects) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
	s.subs = nil
}

// unsubscribeLocked drops every subscription and flushes, so that the
// server no longer delivers to them when it returns.
func (s *subjects) unsubscribeLocked() error {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
	s.subs = nil
	if err := s.nc.Flush(); err != nil {
		return fmt.Errorf("flush unsubscriptions: %w", err)
	}
	return nil
}

// serveHold answers a schemas.HoldRequest once the subjects are held or
// served again.
func (s *subjects) serveHold(m *nats.Msg) {
	var req schemas.HoldRequest
	var reply schemas.HoldReply
	if err := json.Unmarshal(m.Data, &req); err != nil {
		reply.Error = schemas.Errorf(schemas.CodeBadRequest, "hold request: %w", err)
	} else {
		s.mu.Lock()
		if req.Hold {
			err = s.unsubscribeLocked()
		} else {
			err = s.subscribeLocked()
		}
		reply.Held = s.subs == nil
		s.mu.Unlock()
		if err != nil {
			reply.Error = schemas.Errorf(schemas.CodeUnavailable, "%w", err)
		}
	}
	data, _ := json.Marshal(reply)
	_ = m.Respond(data)
}
