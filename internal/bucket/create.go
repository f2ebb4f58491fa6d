package bucket

import (
	"context"
	"errors"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/nats-io/nats.go/jetstream"
)

// CreateOrUpdate creates, or updates to cfg, a key-value bucket whose reads
// go to its stream's leader, and opens it. It makes the stream that
// nats.go's CreateOrUpdateKeyValue would, but for AllowDirect: with it, a
// read of a replicated bucket may be answered by any replica, including a
// follower that has not yet applied the last write (nats-server's direct
// gets are not read-after-write), and a create after a delete then reads
// the deleted value and fails with ErrKeyExists. Sandox decides on what it
// reads (a half-made sandbox removed and made again, a grant, a group that
// exists), so its buckets read what was last written. Of cfg, it uses
// Bucket, Description, History, TTL, MaxBytes, Storage and Replicas.
//
// Such a read is a JetStream API request, which the server may leave
// unanswered for an instant: read with Get and Create.
func CreateOrUpdate(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	if _, err := js.CreateOrUpdateStream(ctx, streamConfig(cfg)); err != nil {
		return nil, err
	}
	// On a cluster, a stream another worker created at the same moment may
	// not be found by the next lookup for an instant: the lookup is tried
	// again while the bucket is not found.
	return backoff.Retry(ctx, func() (jetstream.KeyValue, error) {
		kv, err := js.KeyValue(ctx, cfg.Bucket)
		if err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
			return nil, backoff.Permanent(err)
		}
		return kv, err
	}, backoff.WithBackOff(backoff.NewExponentialBackOff()), backoff.WithMaxElapsedTime(10*time.Second))
}

// streamConfig is the stream behind the bucket cfg describes, with the
// defaults of nats.go's KeyValueConfig and AllowDirect off.
func streamConfig(cfg jetstream.KeyValueConfig) jetstream.StreamConfig {
	history := int64(max(cfg.History, 1))
	maxBytes := cfg.MaxBytes
	if maxBytes == 0 {
		maxBytes = -1
	}
	duplicates := 2 * time.Minute
	if cfg.TTL > 0 && cfg.TTL < duplicates {
		duplicates = cfg.TTL
	}
	return jetstream.StreamConfig{
		Name:              "KV_" + cfg.Bucket,
		Description:       cfg.Description,
		Subjects:          []string{"$KV." + cfg.Bucket + ".>"},
		MaxMsgsPerSubject: history,
		MaxBytes:          maxBytes,
		MaxAge:            cfg.TTL,
		MaxMsgSize:        -1,
		MaxMsgs:           -1,
		MaxConsumers:      -1,
		Storage:           cfg.Storage,
		Replicas:          max(cfg.Replicas, 1),
		AllowRollup:       true,
		DenyDelete:        true,
		Duplicates:        duplicates,
		Discard:           jetstream.DiscardNew,
		AllowDirect:       false,
	}
}
