package orchestrator

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

// store keeps group and sandbox state in JetStream key-value buckets, so
// that every worker sees the same state and it outlives any one process.
type store struct {
	groups    jetstream.KeyValue
	sandboxes jetstream.KeyValue
	ledger    jetstream.KeyValue
	hosts     jetstream.KeyValue
	// heard judges the hosts' silence on this worker's clock (hostSilence).
	heard hostClock
}

func openStore(ctx context.Context, js jetstream.JetStream) (*store, error) {
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
	return &store{groups: g, sandboxes: s, ledger: l, hosts: h}, nil
}

func (s *store) group(ctx context.Context, id string) (schemas.GroupStatus, uint64, error) {
	var g schemas.GroupStatus
	rev, err := get(ctx, s.groups, id, &g)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return g, 0, schemas.Errorf(schemas.CodeNotFound, "group %q does not exist", id)
	}
	return g, rev, err
}

func (s *store) sandbox(ctx context.Context, id string) (schemas.SandboxStatus, uint64, error) {
	var sb schemas.SandboxStatus
	rev, err := get(ctx, s.sandboxes, id, &sb)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return sb, 0, schemas.Errorf(schemas.CodeNotFound, "sandbox %q does not exist", id)
	}
	return sb, rev, err
}

// createGroup records a new group; an existing id is CodeAlreadyExists.
func (s *store) createGroup(ctx context.Context, g *schemas.GroupStatus) error {
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

// createSandbox reserves a sandbox id; an existing id is CodeAlreadyExists.
func (s *store) createSandbox(ctx context.Context, sb schemas.SandboxStatus) (uint64, error) {
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

func (s *store) putSandbox(ctx context.Context, sb *schemas.SandboxStatus) error {
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

// updateGroup applies change to the group with compare-and-set, retrying
// when another worker changed it in between.
func (s *store) updateGroup(ctx context.Context, id string, change func(*schemas.GroupStatus) error) (schemas.GroupStatus, error) {
	return update(ctx, s.groups, id, schemas.Errorf(schemas.CodeNotFound, "group %q does not exist", id), func(g *schemas.GroupStatus) error {
		if err := change(g); err != nil {
			return err
		}
		g.UpdatedAt = time.Now().UTC()
		return nil
	})
}

// updateSandbox applies change to the sandbox with compare-and-set. A
// change that returns errUnchanged writes nothing.
func (s *store) updateSandbox(ctx context.Context, id string, change func(*schemas.SandboxStatus) error) (schemas.SandboxStatus, error) {
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
// from change is returned as is and nothing is written; errUnchanged from
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
		if err := change(&v); errors.Is(err, errUnchanged) {
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

// errUnchanged stops an update that has nothing to change.
var errUnchanged = errors.New("unchanged")

// joinGroup lists sandbox in its group's record, once its create has
// finished, and drops its placement (GroupStatus.Placing).
func (s *store) joinGroup(ctx context.Context, groupID, sandbox string) error {
	_, err := s.updateGroup(ctx, groupID, func(g *schemas.GroupStatus) error {
		delete(g.Placing, sandbox)
		if !slices.Contains(g.Sandboxes, sandbox) {
			g.Sandboxes = append(g.Sandboxes, sandbox)
		}
		return nil
	})
	return err
}

func (s *store) deleteSandbox(ctx context.Context, id string) error {
	if err := s.sandboxes.Delete(ctx, id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("forget sandbox %s: %w", id, err)
	}
	return nil
}

func (s *store) deleteGroup(ctx context.Context, id string) error {
	if err := s.groups.Delete(ctx, id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("forget group %s: %w", id, err)
	}
	return nil
}

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
