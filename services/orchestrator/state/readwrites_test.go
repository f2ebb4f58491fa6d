package state

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestBucketsReadTheirWritesOnACluster writes to a bucket of three
// replicas through one node and reads through each of the others, as two
// workers on two hosts do: a create right after a delete succeeds, and a
// read right after a write sees it. With direct gets (nats.go's default
// for a bucket), a follower that has not applied the last write may
// answer: a create after a delete then fails with ErrKeyExists, which made
// a redelivered create_sandbox refuse the sandbox it had just removed.
func TestBucketsReadTheirWritesOnACluster(t *testing.T) {
	servers, urls := startCluster(t, 3)
	setup, err := nats.Connect(urls)
	require.NoError(t, err)
	t.Cleanup(setup.Close)
	sjs, err := jetstream.New(setup)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return SetupWith(t.Context(), sjs, DefaultRetention(), 3) == nil }, 30*time.Second, 200*time.Millisecond, "setup once JetStream has a leader")

	for _, b := range []string{schemas.GroupBucket, schemas.SandboxBucket, schemas.LedgerBucket, schemas.HostsBucket} {
		s, err := sjs.Stream(t.Context(), "KV_"+b)
		require.NoError(t, err)
		cfg := s.CachedInfo().Config
		assert.False(t, cfg.AllowDirect, "bucket %s reads through its leader", b)
		assert.Equal(t, 3, cfg.Replicas, "bucket %s", b)
		assert.EqualValues(t, 5, cfg.MaxMsgsPerSubject, "bucket %s keeps its history", b)
	}

	kvs := make([]jetstream.KeyValue, len(servers))
	for i, s := range servers {
		nc, err := nats.Connect(s.ClientURL())
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		require.NoError(t, err)
		kvs[i], err = js.KeyValue(t.Context(), schemas.SandboxBucket)
		require.NoError(t, err)
	}
	// Four writers at once, each on its own keys, make a follower's lag
	// likelier: on direct gets this failed within a few hundred rounds.
	const writers, rounds = 4, 500
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for n := range rounds {
				w, r := kvs[(i+n)%3], kvs[(i+n+1)%3]
				key := fmt.Sprintf("sb-%d-%d", i, n%7)
				value := fmt.Sprintf(`{"round":%d}`, n)
				_, err := w.Put(t.Context(), key, []byte(value))
				require.NoError(t, err)
				e, err := r.Get(t.Context(), key)
				if !assert.NoError(t, err, "writer %d round %d: a read after a put", i, n) || !assert.Equal(t, value, string(e.Value()), "writer %d round %d: a read after a put", i, n) {
					return
				}
				require.NoError(t, w.Delete(t.Context(), key))
				_, err = r.Create(t.Context(), key, []byte(`{"again":true}`))
				if !assert.NoError(t, err, "writer %d round %d: a create after a delete", i, n) {
					return
				}
				require.NoError(t, r.Delete(t.Context(), key))
			}
		})
	}
	wg.Wait()
}
