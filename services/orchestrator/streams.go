package orchestrator

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// Setup creates, or updates to the current configuration, the streams and
// key-value buckets sandox uses. It is idempotent; every worker calls it at
// start.
func Setup(ctx context.Context, js jetstream.JetStream) error {
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        schemas.CommandStream,
		Description: "sandox lifecycle commands, consumed once by one orchestrator worker",
		Subjects:    []string{schemas.CommandSubjectPrefix + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      24 * time.Hour,
		Duplicates:  2 * time.Minute,
	}); err != nil {
		return fmt.Errorf("stream %s: %w", schemas.CommandStream, err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        schemas.EventStream,
		Description: "sandox audit log: command results, sandbox events, action batches and observations",
		Subjects:    schemas.EventSubjects(),
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      7 * 24 * time.Hour,
		MaxBytes:    1 << 30,
		// Nothing published here waits for the stream's ack: results,
		// events and records are plain publishes, observations are
		// replies.
		NoAck: true,
	}); err != nil {
		return fmt.Errorf("stream %s: %w", schemas.EventStream, err)
	}
	for _, bucket := range []string{schemas.GroupBucket, schemas.SandboxBucket, schemas.LedgerBucket} {
		if _, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:  bucket,
			History: 5,
			Storage: jetstream.FileStorage,
		}); err != nil {
			return fmt.Errorf("bucket %s: %w", bucket, err)
		}
	}
	return nil
}
