package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// Sandbox is one sandbox of a group. It is safe for concurrent use; action
// batches sent at once run one after another in the sandbox.
type Sandbox struct {
	id    string
	group *SandboxGroup

	mu     sync.Mutex
	status schemas.SandboxStatus
}

// ID returns the sandbox's id.
func (s *Sandbox) ID() string { return s.id }

// Status returns the sandbox's state as last reported by the orchestrator.
func (s *Sandbox) Status() schemas.SandboxStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Refresh asks the orchestrator for the sandbox's status: whether it is
// still running, how many of its processes were killed for memory, how
// often it was restarted, and why it failed. It blocks until the answer
// (30 s unless ctx has a deadline). A sandbox that no longer exists is
// ErrNotFound; no orchestrator is ErrUnavailable.
func (s *Sandbox) Refresh(ctx context.Context) (schemas.SandboxStatus, error) {
	c, err := s.group.link()
	if err != nil {
		return schemas.SandboxStatus{}, err
	}
	st, err := c.sandboxStatus(ctx, s.id)
	if err != nil {
		return st, fmt.Errorf("sandbox %s: %w", s.id, err)
	}
	s.setStatus(st)
	return st, nil
}

func (s *Sandbox) setStatus(st schemas.SandboxStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = st
}

func (s *Sandbox) lifecycle(ctx context.Context, kind schemas.CommandKind) (schemas.CommandResult, error) {
	c, err := s.group.link()
	if err != nil {
		return schemas.CommandResult{}, err
	}
	res, err := c.command(ctx, schemas.Command{Kind: kind, GroupID: s.group.spec.ID, SandboxID: s.id})
	if len(res.Sandboxes) == 1 {
		s.setStatus(res.Sandboxes[0])
	}
	return res, err
}

// Start starts the sandbox and blocks until its executor answers.
func (s *Sandbox) Start(ctx context.Context) error {
	_, err := s.lifecycle(ctx, schemas.StartSandbox)
	return err
}

// End stops and removes the sandbox, its container and its workspace.
func (s *Sandbox) End(ctx context.Context) error {
	_, err := s.lifecycle(ctx, schemas.EndSandbox)
	if err == nil {
		s.group.mu.Lock()
		delete(s.group.sandboxes, s.id)
		c := s.group.conn
		s.group.mu.Unlock()
		if c != nil {
			c.dropMux(s.id)
		}
	}
	return err
}

// Stats asks the orchestrator for the sandbox's live CPU, memory, disk
// and process use against its limits. It blocks until the answer (30 s
// unless ctx has a deadline). A sandbox that is not running is
// ErrConflict, one that does not exist ErrNotFound.
func (s *Sandbox) Stats(ctx context.Context) (schemas.SandboxUsage, error) {
	c, err := s.group.link()
	if err != nil {
		return schemas.SandboxUsage{}, err
	}
	reply, err := c.request(ctx, schemas.SandboxStatsSubject(s.id))
	if err != nil {
		return schemas.SandboxUsage{}, fmt.Errorf("sandbox %s: stats: %w", s.id, err)
	}
	if reply.Stats == nil {
		return schemas.SandboxUsage{}, fmt.Errorf("%w: sandbox %s: stats answered without stats", ErrInternal, s.id)
	}
	if reply.Sandbox != nil {
		s.setStatus(*reply.Sandbox)
	}
	return *reply.Stats, nil
}

// SendOption changes how one batch runs.
type SendOption func(*sendOptions)

type sendOptions struct{ stopOnError bool }

// StopOnError makes the sandbox skip the rest of the batch after the first
// action that fails (CodeSkipped observations).
func StopOnError() SendOption { return func(o *sendOptions) { o.stopOnError = true } }

// SendActions sends a batch of actions and blocks until the sandbox answers
// with one observation per action, in order. A failed action is an
// observation with Error set, not an error of SendActions; the error is for
// a batch that was refused (ErrBadRequest), a sandbox that does not answer
// (ErrSandboxGone, ErrNotFound) or a deadline (ErrTimeout).
func (s *Sandbox) SendActions(ctx context.Context, actions schemas.Actions, opts ...SendOption) ([]schemas.Observation, error) {
	f, err := s.SendActionsAsync(ctx, actions, opts...)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Wait(ctx)
}

// SendActionsJSON is SendActions for a payload in the user's JSON format:
// an object keyed by tool name, or a list of actions.
func (s *Sandbox) SendActionsJSON(ctx context.Context, payload []byte, opts ...SendOption) ([]schemas.Observation, error) {
	actions, err := schemas.ParseActions(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return s.SendActions(ctx, actions, opts...)
}

// SendActionsAsync sends a batch of actions and returns at once with a
// Future that collects the observations; call its Wait, or Close it when
// the answer is no longer wanted. The observations are also kept in the
// SANDOX_EVENTS stream under sandox.obs.<sandbox>.<batch id>.
//
// The order is the protocol's (docs/subjects.md): subscribe to the reply
// subject and to the sandbox's events, then publish the batch, so that
// neither the answer nor an event that loses the batch can be missed. The
// event subscription is the sandbox's, made on its first batch and shared
// by all its batches (replyMux); the reply subscription is the batch's.
func (s *Sandbox) SendActionsAsync(ctx context.Context, actions schemas.Actions, opts ...SendOption) (*Future, error) {
	if len(actions) == 0 {
		return nil, fmt.Errorf("%w: no actions", ErrBadRequest)
	}
	data, err := json.Marshal(actions)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	var o sendOptions
	for _, opt := range opts {
		opt(&o)
	}
	c, err := s.group.link()
	if err != nil {
		return nil, err
	}
	batch := uuid.NewString()
	f := &Future{
		sandbox: s,
		conn:    c,
		batchID: batch,
		replies: make(chan *nats.Msg, 4),
		events:  make(chan *nats.Msg, 64),
		done:    make(chan struct{}),
	}
	reply := schemas.ObservationSubject(s.id, batch)
	m, err := c.mux(s.id)
	if err != nil {
		return nil, err
	}
	f.unmux = m.add(f)
	if f.reply, err = c.nc.ChanSubscribe(reply, f.replies); err != nil {
		f.release()
		return nil, fmt.Errorf("%w: subscribe to %s: %w", ErrUnavailable, reply, err)
	}
	msg := nats.NewMsg(schemas.ActionsSubject(s.id))
	msg.Reply = reply
	msg.Data = data
	msg.Header.Set(schemas.HeaderBatchID, batch)
	msg.Header.Set(schemas.HeaderStopOnError, strconv.FormatBool(o.stopOnError))
	if err := c.who.sign(msg, schemas.SignedBatch(batch, data)); err != nil {
		f.release()
		return nil, err
	}
	f.sent = time.Now()
	if err := c.nc.PublishMsg(msg); err != nil {
		f.release()
		return nil, fmt.Errorf("%w: send actions to sandbox %s: %w", ErrUnavailable, s.id, err)
	}
	if err := s.group.watch(f); err != nil {
		f.release()
		return nil, err
	}
	return f, nil
}

// Tools returns the descriptions of the sandbox's tools (built-in and the
// user's), ready to hand to a model.
func (s *Sandbox) Tools(ctx context.Context) ([]schemas.ToolDescription, error) {
	c, err := s.group.link()
	if err != nil {
		return nil, err
	}
	ctx, cancel := withDefault(ctx, 10*time.Second)
	defer cancel()
	m, err := c.nc.RequestWithContext(ctx, schemas.ToolsSubject(s.id), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: sandbox %s: %w", ErrSandboxGone, s.id, err)
	}
	var out []schemas.ToolDescription
	if err := json.Unmarshal(m.Data, &out); err != nil {
		return nil, fmt.Errorf("%w: decode tools: %w", ErrInternal, err)
	}
	return out, nil
}
