package bucket

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
)

// unanswered is a bucket whose first Get and Create calls fail as a real
// server's do while it updates the account's claims (a test double for
// that instant: provoking it on a real server in this process trips the
// race detector on nats-server's own UpdateAccountClaims, which races with
// the service imports it is processing). Get fails with "no responders";
// Create fails with ErrKeyExists, as nats.go's Create does when its read of
// a deleted key goes unanswered. Past the failures it is the real bucket.
type unanswered struct {
	jetstream.KeyValue
	gets, creates atomic.Int32
}

func (u *unanswered) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	if u.gets.Add(-1) >= 0 {
		return nil, nats.ErrNoResponders
	}
	return u.KeyValue.Get(ctx, key)
}

func (u *unanswered) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	if u.creates.Add(-1) >= 0 {
		return 0, fmt.Errorf("nats: API error: code=400 err_code=10071 description=wrong last sequence: %w", jetstream.ErrKeyExists)
	}
	return u.KeyValue.Create(ctx, key, value, opts...)
}

// TestReadsTryAgainWhileUnanswered reads and creates while the server
// leaves the JetStream API unanswered: Get tries again until the read is
// answered, Create also when the key is deleted, and both give up after
// about 2 s with the error, which is still "no responders".
func TestReadsTryAgainWhileUnanswered(t *testing.T) {
	js := natstest.JetStream(t, natstest.Connect(t, natstest.Start(t)))
	kv, err := CreateOrUpdate(t.Context(), js, jetstream.KeyValueConfig{Bucket: "unanswered", Storage: jetstream.MemoryStorage})
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), "k", []byte("v"))
	require.NoError(t, err)

	u := &unanswered{KeyValue: kv}
	u.gets.Store(5)
	e, err := Get(t.Context(), u, "k")
	require.NoError(t, err)
	assert.Equal(t, "v", string(e.Value()))
	assert.Equal(t, int32(-1), u.gets.Load(), "five unanswered reads, then the answer")

	// A deleted key: the first create is refused as if it existed, and a
	// read shows it does not.
	require.NoError(t, kv.Delete(t.Context(), "k"))
	u.gets.Store(2)
	u.creates.Store(1)
	_, err = Create(t.Context(), u, "k", []byte("again"))
	require.NoError(t, err)
	e, err = kv.Get(t.Context(), "k")
	require.NoError(t, err)
	assert.Equal(t, "again", string(e.Value()))

	// A key that exists: ErrKeyExists once the read answers, not tried
	// again.
	u.gets.Store(0)
	u.creates.Store(0)
	_, err = Create(t.Context(), u, "k", []byte("third"))
	assert.ErrorIs(t, err, jetstream.ErrKeyExists)

	// Never answered: Get gives up with "no responders".
	u.gets.Store(1 << 30)
	_, err = Get(t.Context(), u, "k")
	assert.ErrorIs(t, err, nats.ErrNoResponders)
	assert.Less(t, u.gets.Load(), int32(1<<30-3), "tried several times")

	// A done context ends the tries.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = Get(ctx, u, "k")
	assert.Error(t, err)
}

// TestOtherErrorsAreReturned reads a key that is not there and creates one
// that is: the errors are the bucket's, not tried again.
func TestOtherErrorsAreReturned(t *testing.T) {
	js := natstest.JetStream(t, natstest.Connect(t, natstest.Start(t)))
	kv, err := CreateOrUpdate(t.Context(), js, jetstream.KeyValueConfig{Bucket: "errors", Storage: jetstream.MemoryStorage})
	require.NoError(t, err)
	_, err = Get(t.Context(), kv, "absent")
	assert.ErrorIs(t, err, jetstream.ErrKeyNotFound)
	_, err = Create(t.Context(), kv, "k", []byte("1"))
	require.NoError(t, err)
	_, err = Create(t.Context(), kv, "k", []byte("2"))
	assert.ErrorIs(t, err, jetstream.ErrKeyExists)
	require.NoError(t, kv.Delete(t.Context(), "k"))
	_, err = Create(t.Context(), kv, "k", []byte("3"))
	assert.NoError(t, err, "a create after a delete")
}
