package bucket

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// CreateOrUpdate creates, or updates to cfg, a key-value bucket and opens
// it, as nats.go's CreateOrUpdateKeyValue does: with direct gets, which any
// replica of a replicated bucket may answer. A follower that has not yet
// applied the last write can answer with what it held before, so on a
// cluster a read right after a write may be stale (docs/architecture.md,
// known gaps); reads through the stream's leader were tried and waited out
// every leader election, which the chaos test's node kill turned into
// failed commands. Read with Get and Create.
func CreateOrUpdate(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	return js.CreateOrUpdateKeyValue(ctx, cfg)
}
