package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// ErrNoUsage reports that a sandbox's live use could not be read: the
// dashboard's credentials may not ask (audit), no orchestrator answered, or
// the orchestrator refused (the sandbox is not running).
var ErrNoUsage = errors.New("no live use")

// readUsage asks the orchestrator for the sandbox's live use with the
// request the SDK's Sandbox.Stats makes (schemas.SandboxStatsSubject). It
// blocks until the answer or ctx's deadline.
func readUsage(ctx context.Context, nc *nats.Conn, id string) (schemas.SandboxUsage, error) {
	msg, err := nc.RequestWithContext(ctx, schemas.SandboxStatsSubject(id), nil)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return schemas.SandboxUsage{}, fmt.Errorf("%w: no orchestrator answers %s", ErrNoUsage, schemas.SandboxStatsSubject(id))
	case errors.Is(err, context.DeadlineExceeded):
		return schemas.SandboxUsage{}, fmt.Errorf("%w: no answer in time (with audit credentials the dashboard may not ask; give it client or control credentials)", ErrNoUsage)
	case err != nil:
		return schemas.SandboxUsage{}, fmt.Errorf("%w: %w", ErrNoUsage, err)
	}
	var reply schemas.StatusReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return schemas.SandboxUsage{}, fmt.Errorf("%w: undecodable answer: %w", ErrNoUsage, err)
	}
	if reply.Error != nil {
		return schemas.SandboxUsage{}, fmt.Errorf("%w: %s: %s", ErrNoUsage, reply.Error.Code, reply.Error.Message)
	}
	if reply.Stats == nil {
		return schemas.SandboxUsage{}, fmt.Errorf("%w: the answer holds no stats", ErrNoUsage)
	}
	return *reply.Stats, nil
}
