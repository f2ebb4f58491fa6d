package data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// records reads the orchestrator's recorded sandboxes and groups.
type records struct {
	sandboxes jetstream.KeyValue
	groups    jetstream.KeyValue
}

func openRecords(ctx context.Context, js jetstream.JetStream) (records, error) {
	s, err := js.KeyValue(ctx, schemas.SandboxBucket)
	if err != nil {
		return records{}, fmt.Errorf("bucket %s: %w", schemas.SandboxBucket, err)
	}
	g, err := js.KeyValue(ctx, schemas.GroupBucket)
	if err != nil {
		return records{}, fmt.Errorf("bucket %s: %w", schemas.GroupBucket, err)
	}
	return records{sandboxes: s, groups: g}, nil
}

// sandbox returns the recorded status of a sandbox; not_found when there
// is none.
func (r records) sandbox(ctx context.Context, id string) (schemas.SandboxStatus, error) {
	var st schemas.SandboxStatus
	e, err := r.sandboxes.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return st, schemas.Errorf(schemas.CodeNotFound, "sandbox %s: %w", id, err)
	}
	if err != nil {
		return st, schemas.Errorf(schemas.CodeUnavailable, "sandbox %s: %w", id, err)
	}
	if err := json.Unmarshal(e.Value(), &st); err != nil {
		return st, schemas.Errorf(schemas.CodeInternal, "sandbox %s: %w", id, err)
	}
	return st, nil
}

// group returns the recorded status of a group.
func (r records) group(ctx context.Context, id string) (schemas.GroupStatus, error) {
	var st schemas.GroupStatus
	e, err := r.groups.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return st, schemas.Errorf(schemas.CodeNotFound, "group %s: %w", id, err)
	}
	if err != nil {
		return st, schemas.Errorf(schemas.CodeUnavailable, "group %s: %w", id, err)
	}
	if err := json.Unmarshal(e.Value(), &st); err != nil {
		return st, schemas.Errorf(schemas.CodeInternal, "group %s: %w", id, err)
	}
	return st, nil
}
