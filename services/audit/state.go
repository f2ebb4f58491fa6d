package audit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// State is what the orchestrator's buckets hold: every host, group and
// sandbox, sorted by name (sandboxes by group, then id). Missing names the
// buckets that do not exist yet (no orchestrator has run on this NATS
// server).
type State struct {
	Hosts     []schemas.HostStatus
	Groups    []schemas.GroupStatus
	Sandboxes []schemas.SandboxStatus
	Missing   []string
}

// ReadState reads the buckets of hosts, groups and sandboxes. A bucket
// that does not exist reads as empty and is named in Missing; any other
// error is returned. It blocks until every bucket is read or ctx is done.
func ReadState(ctx context.Context, js jetstream.JetStream) (State, error) {
	var st State
	var err error
	if st.Hosts, err = readBucket[schemas.HostStatus](ctx, js, schemas.HostsBucket, &st.Missing); err != nil {
		return st, err
	}
	if st.Groups, err = readBucket[schemas.GroupStatus](ctx, js, schemas.GroupBucket, &st.Missing); err != nil {
		return st, err
	}
	if st.Sandboxes, err = readBucket[schemas.SandboxStatus](ctx, js, schemas.SandboxBucket, &st.Missing); err != nil {
		return st, err
	}
	slices.SortFunc(st.Hosts, func(a, b schemas.HostStatus) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(st.Groups, func(a, b schemas.GroupStatus) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(st.Sandboxes, func(a, b schemas.SandboxStatus) int {
		return cmp.Or(cmp.Compare(a.GroupID, b.GroupID), cmp.Compare(a.ID, b.ID))
	})
	return st, nil
}

// readBucket decodes every value of bucket. A missing bucket is added to
// missing and reads as empty; a value that does not decode is skipped (the
// orchestrator owns the layout, and a newer one may add kinds of keys).
func readBucket[T any](ctx context.Context, js jetstream.JetStream, bucket string, missing *[]string) ([]T, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		*missing = append(*missing, bucket)
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", bucket, err)
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", bucket, err)
	}
	defer w.Stop()
	var out []T
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("bucket %s: %w", bucket, ctx.Err())
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("bucket %s: the watch stopped", bucket)
			}
			if e == nil { // every current value was delivered
				return out, nil
			}
			var v T
			if json.Unmarshal(e.Value(), &v) == nil {
				out = append(out, v)
			}
		}
	}
}
