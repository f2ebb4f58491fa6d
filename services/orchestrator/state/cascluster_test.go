package state

import (
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestUpdateRetriesConflictsOnACluster runs concurrent compare-and-set
// updates of one key of a bucket with three replicas. A replicated bucket
// reports a conflict with another code (10164) than a single server's
// (10071); update must retry both, so that every increment lands.
func TestUpdateRetriesConflictsOnACluster(t *testing.T) {
	_, urls := startCluster(t, 3)
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return SetupWith(t.Context(), js, DefaultRetention(), 3) == nil }, 30*time.Second, 200*time.Millisecond, "setup once JetStream has a leader")
	kv, err := js.KeyValue(t.Context(), schemas.LedgerBucket)
	require.NoError(t, err)

	type counter struct{ N int }
	const writers, each = 4, 5
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				_, err := update(t.Context(), kv, "count", nil, func(c *counter) error { c.N++; return nil })
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	var c counter
	_, err = get(t.Context(), kv, "count", &c)
	require.NoError(t, err)
	assert.Equal(t, writers*each, c.N)
}
