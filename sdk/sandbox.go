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

// Refresh reads the sandbox's recorded state afresh: whether it is still
// running, how many of its processes were killed for memory, how often it
// was restarted, and why it failed.
func (s *Sandbox) Refresh(ctx context.Context) (schemas.SandboxStatus, error) {
	c, err := s.group.link()
	if err != nil {
		return schemas.SandboxStatus{}, err
	}
	st, err := sandboxState(ctx, c, s.id)
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
		s.group.mu.Unlock()
	}
	return err
}

// Stats reads the sandbox's live CPU, memory and process use against its
// limits.
func (s *Sandbox) Stats(ctx context.Context) (schemas.SandboxUsage, error) {
	res, err := s.lifecycle(ctx, schemas.SandboxStats)
	if err != nil {
		return schemas.SandboxUsage{}, err
	}
	if res.Stats == nil {
		return schemas.SandboxUsage{}, fmt.Errorf("%w: sandbox_stats answered without stats", ErrInternal)
	}
	return *res.Stats, nil
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
// Future that collects the observations. The observations are also kept in
// the SANDOX_EVENTS stream under sandox.obs.<sandbox>.<batch id>.
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
	reply := schemas.ObservationSubject(s.id, batch)
	sub, err := c.nc.SubscribeSync(reply)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	msg := nats.NewMsg(schemas.ActionsSubject(s.id))
	msg.Reply = reply
	msg.Data = data
	msg.Header.Set(schemas.HeaderBatchID, batch)
	msg.Header.Set(schemas.HeaderStopOnError, strconv.FormatBool(o.stopOnError))
	// The sandbox's events tell a batch that will never be answered (its
	// sandbox restarted or stopped) from one that is slow.
	events := make(chan *nats.Msg, 16)
	evSub, err := c.nc.ChanSubscribe(schemas.SandboxEventSubject(s.id), events)
	if err != nil {
		sub.Unsubscribe()
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err := c.nc.PublishMsg(msg); err != nil {
		sub.Unsubscribe()
		evSub.Unsubscribe()
		return nil, fmt.Errorf("%w: send actions to sandbox %s: %w", ErrUnavailable, s.id, err)
	}
	return &Future{sandbox: s, batchID: batch, sub: sub, evSub: evSub, events: events, sent: time.Now(), done: make(chan struct{})}, nil
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
