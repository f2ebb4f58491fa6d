package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// ErrAuthService means the auth service refused or did not answer.
var ErrAuthService = errors.New("auth service")

// Client is the control plane's side of the Service. It is safe for
// concurrent use.
type Client struct {
	NC *nats.Conn
}

// MintSandbox asks for a new identity for the sandbox id, allowed the
// database subjects of grants, and returns its .creds file; socketOnly
// makes it valid on the server's Unix socket alone. It blocks until the
// service answers or ctx ends.
func (c Client) MintSandbox(ctx context.Context, id string, socketOnly bool, grants ...schemas.DatabaseGrant) ([]byte, error) {
	r, err := c.call(ctx, MintSubject, request{SandboxID: id, SocketOnly: socketOnly, Grants: grants})
	if err != nil {
		return nil, err
	}
	return []byte(r.Creds), nil
}

// RevokeSandbox revokes every identity of the sandbox id. It blocks until
// the service answers or ctx ends.
func (c Client) RevokeSandbox(ctx context.Context, id string) error {
	_, err := c.call(ctx, RevokeSubject, request{SandboxID: id})
	return err
}

func (c Client) call(ctx context.Context, subject string, req request) (reply, error) {
	id := req.SandboxID
	data, _ := json.Marshal(req)
	m, err := c.NC.RequestWithContext(ctx, subject, data)
	if err != nil {
		return reply{}, fmt.Errorf("%w: %s for sandbox %s: %w", ErrAuthService, subject, id, err)
	}
	var r reply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return reply{}, fmt.Errorf("%w: %s for sandbox %s: %w", ErrAuthService, subject, id, err)
	}
	if r.Error != "" {
		return reply{}, fmt.Errorf("%w: %s for sandbox %s: %s", ErrAuthService, subject, id, r.Error)
	}
	return r, nil
}
