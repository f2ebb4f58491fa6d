package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// requestTimeout bounds a status or stats request whose context has no
// deadline.
const requestTimeout = 30 * time.Second

// request asks the orchestrator on one of its request subjects
// (schemas.RequestSubjectPrefix) and returns its reply. A refusal is the
// reply's wire error; no orchestrator is ErrUnavailable.
func (c *conn) request(ctx context.Context, subject string) (schemas.StatusReply, error) {
	ctx, cancel := withDefault(ctx, requestTimeout)
	defer cancel()
	var reply schemas.StatusReply
	m, err := c.nc.RequestWithContext(ctx, subject, nil)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return reply, fmt.Errorf("%w: no orchestrator answers %s: is sandox up? (sandox up): %w", ErrUnavailable, subject, err)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout):
		return reply, fmt.Errorf("%w: %s: no answer: %w", ErrTimeout, subject, err)
	case err != nil:
		return reply, fmt.Errorf("%w: %s: %w", ErrUnavailable, subject, err)
	}
	if err := json.Unmarshal(m.Data, &reply); err != nil {
		return reply, fmt.Errorf("%w: decode the answer on %s: %w", ErrInternal, subject, err)
	}
	if reply.Error != nil {
		return reply, fromWire(reply.Error)
	}
	return reply, nil
}

// sandboxStatus asks the orchestrator for a sandbox's recorded status.
func (c *conn) sandboxStatus(ctx context.Context, id string) (schemas.SandboxStatus, error) {
	reply, err := c.request(ctx, schemas.SandboxStatusSubject(id))
	if err != nil {
		return schemas.SandboxStatus{}, err
	}
	if reply.Sandbox == nil {
		return schemas.SandboxStatus{}, fmt.Errorf("%w: %s answered without a sandbox", ErrInternal, schemas.SandboxStatusSubject(id))
	}
	return *reply.Sandbox, nil
}
