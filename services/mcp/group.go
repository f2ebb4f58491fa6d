package mcp

import (
	"cmp"
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/sandox/sandox/sdk"
)

// GroupOpener opens sandboxes in a started group: each is created with the
// same options, started, and ended by the func Open returns.
type GroupOpener struct {
	// Group is the started group the sandboxes join.
	Group *sdk.SandboxGroup
	// Sandbox are the options of every sandbox (tools added to the group's,
	// resources, databases).
	Sandbox sdk.SandboxOptions
	// Prefix starts every sandbox id, which ends with 8 random hex digits;
	// "mcp-" when empty.
	Prefix string
}

// Open creates and starts a sandbox. It blocks until the sandbox runs (a
// first start may build an image); a sandbox that was created but did not
// start is ended again. Errors are the SDK's.
func (o GroupOpener) Open(ctx context.Context) (Sandbox, func(context.Context) error, error) {
	id := randomID(cmp.Or(o.Prefix, "mcp-"))
	sb, err := o.Group.CreateSandbox(ctx, id, o.Sandbox)
	if err != nil {
		return nil, nil, err
	}
	if err := sb.Start(ctx); err != nil {
		return nil, nil, errors.Join(err, sb.End(context.WithoutCancel(ctx)))
	}
	return sb, sb.End, nil
}

// randomID is prefix followed by 8 random hex digits (the first group of a
// random UUID, which has no hyphen).
func randomID(prefix string) string {
	return prefix + uuid.NewString()[:8]
}
