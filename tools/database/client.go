package database

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools/catalog"
)

// Family is the family's name (catalog.Database).
const Family = catalog.Database

// RequestFunc sends a request on a NATS subject and returns the reply's
// data; tools.Env.Request is one.
type RequestFunc func(ctx context.Context, subject string, data []byte) ([]byte, error)

// ErrNoDataService: nothing answers database requests, or this executor
// has no connection.
var ErrNoDataService = fmt.Errorf("no data service: %w", schemas.CodeUnsupported)

// client sends one sandbox's database requests.
type client struct {
	sandbox string
	request RequestFunc

	mu     sync.Mutex
	grants schemas.DatabaseAccess
	known  bool
}

// timeout bounds a call whose context has no deadline.
const timeout = 60 * time.Second

func (c *client) send(ctx context.Context, subject string, payload any) (schemas.DatabaseReply, error) {
	if c.request == nil {
		return schemas.DatabaseReply{}, ErrNoDataService
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return schemas.DatabaseReply{}, fmt.Errorf("encode database request: %w", err)
	}
	raw, err := c.request(ctx, subject, data)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return schemas.DatabaseReply{}, fmt.Errorf("%w: nothing serves %s (is the data service running?)", ErrNoDataService, subject)
	case err != nil:
		return schemas.DatabaseReply{}, fmt.Errorf("ask the data service: %w", err)
	}
	var r schemas.DatabaseReply
	if err := json.Unmarshal(raw, &r); err != nil {
		return schemas.DatabaseReply{}, fmt.Errorf("decode database reply: %w", err)
	}
	if r.Error != nil {
		return r, r.Error
	}
	return r, nil
}

// Grants returns the sandbox's grants, asked once of the data service.
func (c *client) Grants(ctx context.Context) (schemas.DatabaseAccess, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known {
		return c.grants, nil
	}
	r, err := c.send(ctx, schemas.DatabaseListSubject(c.sandbox), struct{}{})
	if err != nil {
		return nil, err
	}
	c.grants, c.known = r.Grants, true
	return c.grants, nil
}

// call runs op on a namespace of database. A call the grants do not allow
// is refused here with access_denied, before the bus would refuse it; the
// bus and the data service check again in any case.
func (c *client) call(ctx context.Context, database, namespace string, access schemas.DatabaseOp, op string, args any, out any) error {
	grants, err := c.Grants(ctx)
	if err != nil {
		return err
	}
	if !grants.Allows(database, namespace, access) {
		return schemas.Errorf(schemas.CodeAccessDenied, "access denied: this sandbox may not %s namespace %q of %s (its grants: %s)", access, namespace, database, describe(grants))
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("encode %s arguments: %w", op, err)
	}
	r, err := c.send(ctx, schemas.DatabaseSubject(c.sandbox, database, namespace, access), schemas.DatabaseRequest{Op: op, Args: raw})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return fmt.Errorf("decode %s result: %w", op, err)
	}
	return nil
}

func describe(grants schemas.DatabaseAccess) string {
	if len(grants) == 0 {
		return "none"
	}
	s := ""
	for i, g := range grants {
		if i > 0 {
			s += ", "
		}
		access := "read"
		if g.Write {
			access = "read_write"
		}
		s += fmt.Sprintf("%s/%s %s", g.Database, g.Namespace, access)
	}
	return s
}
