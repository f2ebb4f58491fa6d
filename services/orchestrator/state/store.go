package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// Store keeps group and sandbox state in JetStream key-value buckets, so
// that every worker sees the same state and it outlives any one process.
type Store struct {
	groups    jetstream.KeyValue
	sandboxes jetstream.KeyValue
	ledger    jetstream.KeyValue
	hosts     jetstream.KeyValue
	// heard judges the hosts' silence on this worker's clock (HostSilence).
	heard hostClock
}

// OpenStore opens the buckets that Setup made.
func OpenStore(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	g, err := js.KeyValue(ctx, schemas.GroupBucket)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", schemas.GroupBucket, err)
	}
	s, err := js.KeyValue(ctx, schemas.SandboxBucket)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", schemas.SandboxBucket, err)
	}
	l, err := js.KeyValue(ctx, schemas.LedgerBucket)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", schemas.LedgerBucket, err)
	}
	h, err := js.KeyValue(ctx, schemas.HostsBucket)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", schemas.HostsBucket, err)
	}
	return &Store{groups: g, sandboxes: s, ledger: l, hosts: h}, nil
}

// Group reads group id and its revision; an absent one is CodeNotFound.
func (s *Store) Group(ctx context.Context, id string) (schemas.GroupStatus, uint64, error) {
	var g schemas.GroupStatus
	rev, err := get(ctx, s.groups, id, &g)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return g, 0, schemas.Errorf(schemas.CodeNotFound, "group %q does not exist", id)
	}
	return g, rev, err
}

// Sandbox reads sandbox id and its revision; an absent one is
// CodeNotFound.
func (s *Store) Sandbox(ctx context.Context, id string) (schemas.SandboxStatus, uint64, error) {
	var sb schemas.SandboxStatus
	rev, err := get(ctx, s.sandboxes, id, &sb)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return sb, 0, schemas.Errorf(schemas.CodeNotFound, "sandbox %q does not exist", id)
	}
	return sb, rev, err
}

// CreateGroup records a new group; an existing id is CodeAlreadyExists.
func (s *Store) CreateGroup(ctx context.Context, g *schemas.GroupStatus) error {
	g.UpdatedAt = time.Now().UTC()
	data, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if _, err := s.groups.Create(ctx, g.ID, data); errors.Is(err, jetstream.ErrKeyExists) {
		return schemas.Errorf(schemas.CodeAlreadyExists, "group %q already exists", g.ID)
	} else if err != nil {
		return fmt.Errorf("record group %s: %w", g.ID, err)
	}
	return nil
}

// CreateSandbox reserves a sandbox id; an existing id is CodeAlreadyExists.
func (s *Store) CreateSandbox(ctx context.Context, sb schemas.SandboxStatus) (uint64, error) {
	sb.UpdatedAt = time.Now().UTC()
	data, err := json.Marshal(sb)
	if err != nil {
		return 0, err
	}
	rev, err := s.sandboxes.Create(ctx, sb.ID, data)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, schemas.Errorf(schemas.CodeAlreadyExists, "sandbox %q already exists", sb.ID)
	} else if err != nil {
		return 0, fmt.Errorf("record sandbox %s: %w", sb.ID, err)
	}
	return rev, nil
}

// PutSandbox records sb as it is, whatever the record held.
func (s *Store) PutSandbox(ctx context.Context, sb *schemas.SandboxStatus) error {
	sb.UpdatedAt = time.Now().UTC()
	data, err := json.Marshal(sb)
	if err != nil {
		return err
	}
	if _, err := s.sandboxes.Put(ctx, sb.ID, data); err != nil {
		return fmt.Errorf("record sandbox %s: %w", sb.ID, err)
	}
	return nil
}

// UpdateGroup applies change to the group with compare-and-set, retrying
// when another worker changed it in between.
func (s *Store) UpdateGroup(ctx context.Context, id string, change func(*schemas.GroupStatus) error) (schemas.GroupStatus, error) {
	return update(ctx, s.groups, id, schemas.Errorf(schemas.CodeNotFound, "group %q does not exist", id), func(g *schemas.GroupStatus) error {
		if err := change(g); err != nil {
			return err
		}
		g.UpdatedAt = time.Now().UTC()
		return nil
	})
}

// UpdateSandbox applies change to the sandbox with compare-and-set. A
// change that returns ErrUnchanged writes nothing.
func (s *Store) UpdateSandbox(ctx context.Context, id string, change func(*schemas.SandboxStatus) error) (schemas.SandboxStatus, error) {
	return update(ctx, s.sandboxes, id, schemas.Errorf(schemas.CodeNotFound, "sandbox %q does not exist", id), func(sb *schemas.SandboxStatus) error {
		if err := change(sb); err != nil {
			return err
		}
		sb.UpdatedAt = time.Now().UTC()
		return nil
	})
}

// update applies change to the JSON value under key with compare-and-set,
// retrying when another worker changed it in between. An absent key is the
// error missing, or, when missing is nil, the zero value, created. An error
// from change is returned as is and nothing is written; ErrUnchanged from
// change is no error.
func update[T any](ctx context.Context, kv jetstream.KeyValue, key string, missing error, change func(*T) error) (T, error) {
	var zero T
	for try := range updateTries {
		if try > 0 {
			if err := conflictBackoff(ctx, try); err != nil {
				return zero, err
			}
		}
		var v T
		rev, err := get(ctx, kv, key, &v)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound) && missing != nil:
			return zero, missing
		case err != nil && !errors.Is(err, jetstream.ErrKeyNotFound):
			return zero, err
		}
		if err := change(&v); errors.Is(err, ErrUnchanged) {
			return v, nil
		} else if err != nil {
			return v, err
		}
		data, err := json.Marshal(v)
		if err != nil {
			return v, err
		}
		if rev == 0 {
			_, err = kv.Create(ctx, key, data)
		} else {
			_, err = kv.Update(ctx, key, data, rev)
		}
		if err == nil {
			return v, nil
		}
		if !isWrongSequence(err) && !errors.Is(err, jetstream.ErrKeyExists) {
			return v, fmt.Errorf("record %s/%s: %w", kv.Bucket(), key, err)
		}
	}
	return zero, schemas.Errorf(schemas.CodeConflict, "%s/%s changed too often to update", kv.Bucket(), key)
}

// updateTries bounds the compare-and-set tries of one update.
const updateTries = 30

// conflictBackoff waits before the next try of a compare-and-set that lost
// to another writer: a random time up to 2^try ms (64 ms at most), so that
// writers that collided do not collide again in step. On a replicated
// bucket a read may also lag the last write for a moment, which a tight
// loop of tries would only repeat.
func conflictBackoff(ctx context.Context, try int) error {
	d := time.Duration(rand.Int64N(int64(min(1<<try, 64)) * int64(time.Millisecond)))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// ErrUnchanged stops an update that has nothing to change.
var ErrUnchanged = errors.New("unchanged")

// JoinGroup lists sandbox in its group's record, once its create has
// finished, and drops its placement (GroupStatus.Placing).
func (s *Store) JoinGroup(ctx context.Context, groupID, sandbox string) error {
	_, err := s.UpdateGroup(ctx, groupID, func(g *schemas.GroupStatus) error {
		delete(g.Placing, sandbox)
		if !slices.Contains(g.Sandboxes, sandbox) {
			g.Sandboxes = append(g.Sandboxes, sandbox)
		}
		return nil
	})
	return err
}

// DeleteSandbox forgets sandbox id; an absent one is no error.
func (s *Store) DeleteSandbox(ctx context.Context, id string) error {
	if err := s.sandboxes.Delete(ctx, id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("forget sandbox %s: %w", id, err)
	}
	return nil
}

// DeleteGroup forgets group id; an absent one is no error.
func (s *Store) DeleteGroup(ctx context.Context, id string) error {
	if err := s.groups.Delete(ctx, id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("forget group %s: %w", id, err)
	}
	return nil
}

// get reads key of kv into v and returns its revision.
func get(ctx context.Context, kv jetstream.KeyValue, key string, v any) (uint64, error) {
	e, err := kv.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(e.Value(), v); err != nil {
		return 0, fmt.Errorf("decode %s/%s: %w", kv.Bucket(), key, err)
	}
	return e.Revision(), nil
}

// isWrongSequence reports whether err is a compare-and-set conflict: the
// key changed since the revision read. A bucket of one replica reports it
// with code 10071, a replicated one (a cluster) with 10164; the client
// maps both to ErrKeyRevisionMismatch.
func isWrongSequence(err error) bool {
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// GroupIDs lists the ids of the recorded groups.
func (s *Store) GroupIDs(ctx context.Context) ([]string, error) { return keys(ctx, s.groups) }

// SandboxIDs lists the ids of the recorded sandboxes.
func (s *Store) SandboxIDs(ctx context.Context) ([]string, error) { return keys(ctx, s.sandboxes) }

// HostNames lists the names of the recorded hosts.
func (s *Store) HostNames(ctx context.Context) ([]string, error) { return keys(ctx, s.hosts) }

// WatchGroups watches every group record, from the current ones on.
func (s *Store) WatchGroups(ctx context.Context) (jetstream.KeyWatcher, error) {
	return s.groups.WatchAll(ctx)
}

// UpdateHost applies change to host name's record with compare-and-set. An
// absent record is missing when missing is not nil, and is created
// otherwise; change returning ErrUnchanged writes nothing.
func (s *Store) UpdateHost(ctx context.Context, name string, missing error, change func(*schemas.HostStatus) error) (schemas.HostStatus, error) {
	return update(ctx, s.hosts, name, missing, change)
}

// keys lists a bucket's keys; an empty bucket has none.
func keys(ctx context.Context, kv jetstream.KeyValue) ([]string, error) {
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for k := range lister.Keys() {
		ids = append(ids, k)
	}
	return ids, nil
}
