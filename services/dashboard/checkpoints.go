package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// readCheckpoints returns the checkpoints of sandbox id, oldest first, as
// the orchestrator summarised them in schemas.CheckpointIndexBucket (keyed
// <sandbox>.<checkpoint>). It reads the summaries only, not the
// manifests, so it costs one read per checkpoint whatever their size. None
// when the bucket does not exist (no checkpoint was ever taken).
func readCheckpoints(ctx context.Context, js jetstream.JetStream, id string) ([]schemas.Checkpoint, error) {
	kv, err := js.KeyValue(ctx, schemas.CheckpointIndexBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", schemas.CheckpointIndexBucket, err)
	}
	keys, err := kv.ListKeysFiltered(ctx, id+".*")
	if err != nil {
		return nil, fmt.Errorf("checkpoints of %s: %w", id, err)
	}
	var out []schemas.Checkpoint
	for key := range keys.Keys() {
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted since the listing
		} else if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", key, err)
		}
		var c schemas.Checkpoint
		if err := json.Unmarshal(e.Value(), &c); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", key, err)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b schemas.Checkpoint) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}
