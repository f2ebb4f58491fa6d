package bucket

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/services/auth"
)

// TestCreateOrUpdateTakesOverABucket opens a bucket that nats.go's
// CreateOrUpdateKeyValue made (as sandox did before CreateOrUpdate): the
// update turns its direct gets off and keeps what it holds, and a second
// call changes nothing.
func TestCreateOrUpdateTakesOverABucket(t *testing.T) {
	js := natstest.JetStream(t, natstest.Connect(t, natstest.Start(t)))
	cfg := jetstream.KeyValueConfig{Bucket: "taken_over", History: 3, Storage: jetstream.FileStorage}
	old, err := js.CreateOrUpdateKeyValue(t.Context(), cfg)
	require.NoError(t, err)
	_, err = old.Put(t.Context(), "k", []byte("v1"))
	require.NoError(t, err)

	for range 2 {
		kv, err := CreateOrUpdate(t.Context(), js, cfg)
		require.NoError(t, err)
		st, err := kv.Status(t.Context())
		require.NoError(t, err)
		info := st.(*jetstream.KeyValueBucketStatus).StreamInfo()
		assert.False(t, info.Config.AllowDirect)
		assert.EqualValues(t, 3, st.History())
		e, err := Get(t.Context(), kv, "k")
		require.NoError(t, err)
		assert.Equal(t, "v1", string(e.Value()))
	}
	_, err = CreateOrUpdate(t.Context(), js, jetstream.KeyValueConfig{Bucket: "no spaces"})
	assert.Error(t, err, "a bucket name the stream cannot have")
}

// TestReadsAcrossAccountUpdates reads a bucket while the server updates
// the account's claims again and again, as it does on every revocation of
// a sandbox's identity: each update takes the account's imports, the
// JetStream API's among them, down and up, and a read in between is
// answered "no responders". Get and Create try again; every read and
// create succeeds. (The plain kv.Get failures are counted for the log:
// some tens in a few thousand on this test's machine.)
func TestReadsAcrossAccountUpdates(t *testing.T) {
	authority, err := auth.NewAuthority()
	require.NoError(t, err)
	ns := natstest.Start(t, natstest.Auth(authority))
	creds, err := authority.Mint("bucket test", auth.RoleControl, "")
	require.NoError(t, err)
	js := natstest.JetStream(t, natstest.Connect(t, ns, creds.Option()))
	kv, err := CreateOrUpdate(t.Context(), js, jetstream.KeyValueConfig{Bucket: "reads", Storage: jetstream.MemoryStorage})
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), "k", []byte("v"))
	require.NoError(t, err)

	var stop atomic.Bool
	var updates sync.WaitGroup
	updates.Go(func() {
		acc, err := ns.LookupAccount(authority.AccountKey())
		if !assert.NoError(t, err) {
			return
		}
		for n := int64(1); !stop.Load(); n++ {
			tok, err := authority.AccountJWT(authority.AccountClaims(map[string]int64{"UREVOKED": n}))
			if !assert.NoError(t, err) {
				return
			}
			ac, err := jwt.DecodeAccountClaims(tok)
			if !assert.NoError(t, err) {
				return
			}
			ns.UpdateAccountClaims(acc, ac)
		}
	})
	const reads = 2000
	var plain int
	for i := range reads {
		if _, err := kv.Get(t.Context(), "k"); err != nil {
			plain++
		}
		e, err := Get(t.Context(), kv, "k")
		require.NoError(t, err, "read %d", i)
		require.Equal(t, "v", string(e.Value()))
		if i%10 == 0 {
			key := "c" + string(rune('a'+i%26))
			_, err := Create(t.Context(), kv, key, []byte("new"))
			require.NoError(t, err, "create %d", i)
			require.NoError(t, kv.Delete(t.Context(), key))
		}
	}
	stop.Store(true)
	updates.Wait()
	t.Logf("plain kv.Get failed %d times of %d while the account was updated", plain, reads)
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
