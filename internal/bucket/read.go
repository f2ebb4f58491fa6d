package bucket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// quietFor bounds how long Get and Create try again while the JetStream API
// has no responder.
const quietFor = 2 * time.Second

// Get reads key of kv. A read that is a JetStream API request (not a
// direct get) is answered "no responders" for an instant whenever the
// server updates the account's claims (it takes the account's imports, the
// API's among them, down and up again): sandox does that on every
// revocation of a sandbox's identity. Get tries again, backing off, for up
// to 2 s; any other error is returned at once.
func Get(ctx context.Context, kv jetstream.KeyValue, key string) (jetstream.KeyValueEntry, error) {
	return retry(ctx, func() (jetstream.KeyValueEntry, error) { return kv.Get(ctx, key) })
}

// Create is kv.Create with Get's retry. kv.Create, when the key has a
// value or a delete marker, reads the key to tell which; when that read is
// not answered, it reports ErrKeyExists for a deleted key. So Create reads
// the key itself after ErrKeyExists, and when the key is absent or deleted
// it creates again. A create that failed wrote nothing, so trying again is
// safe.
func Create(ctx context.Context, kv jetstream.KeyValue, key string, value []byte) (uint64, error) {
	return retry(ctx, func() (uint64, error) {
		rev, err := kv.Create(ctx, key, value)
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return rev, err
		}
		if _, gerr := kv.Get(ctx, key); errors.Is(gerr, jetstream.ErrKeyNotFound) || errors.Is(gerr, nats.ErrNoResponders) {
			return rev, fmt.Errorf("%w: the read of key %s after %v went unanswered", nats.ErrNoResponders, key, err)
		}
		return rev, err
	})
}

func retry[T any](ctx context.Context, op func() (T, error)) (T, error) {
	return backoff.Retry(ctx, func() (T, error) {
		v, err := op()
		if err != nil && !errors.Is(err, nats.ErrNoResponders) {
			return v, backoff.Permanent(err)
		}
		return v, err
	}, backoff.WithBackOff(&backoff.ExponentialBackOff{
		InitialInterval:     2 * time.Millisecond,
		RandomizationFactor: 0.5,
		Multiplier:          2,
		MaxInterval:         200 * time.Millisecond,
	}), backoff.WithMaxElapsedTime(quietFor))
}
