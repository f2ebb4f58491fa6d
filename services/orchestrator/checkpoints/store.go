package checkpoints

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// StoreConfig sizes the checkpoint store.
type StoreConfig struct {
	// Replicas is how many copies JetStream keeps of each bucket.
	Replicas int
	// MaxBytes bounds the object store of contents and manifests; a
	// checkpoint that would pass it is refused (CodeResourceExhausted).
	// 0 or less is no bound.
	MaxBytes int64
}

// Store holds checkpoints on the NATS backbone: summaries in a key-value
// bucket, contents and manifests in an object store. It is safe for
// concurrent use.
type Store struct {
	index jetstream.KeyValue
	blobs jetstream.ObjectStore
}

// OpenStore creates, or updates to cfg, the checkpoint buckets and returns
// the store over them.
func OpenStore(ctx context.Context, js jetstream.JetStream, cfg StoreConfig) (*Store, error) {
	replicas := max(cfg.Replicas, 1)
	index, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      schemas.CheckpointIndexBucket,
		Description: "sandox checkpoints: one summary per checkpoint, keyed <sandbox>.<checkpoint>",
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", schemas.CheckpointIndexBucket, err)
	}
	maxBytes := cfg.MaxBytes
	if maxBytes <= 0 {
		maxBytes = -1
	}
	blobs, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:      schemas.CheckpointBlobBucket,
		Description: "sandox checkpoints: file contents by sha256, and manifests",
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		MaxBytes:    maxBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("object store %s: %w", schemas.CheckpointBlobBucket, err)
	}
	return &Store{index: index, blobs: blobs}, nil
}

// transferTimeout bounds one transfer of size bytes to or from the object
// store. Without a deadline of its own the client gives a whole object 5 s,
// which a large file on a busy host passes; this allows 30 s plus a second
// per MiB (a floor of 1 MiB/s).
func transferTimeout(size int64) time.Duration {
	return 30*time.Second + time.Duration(size>>20)*time.Second
}

func blobName(sum string) string { return "sha256-" + sum }

func manifestName(sandboxID, id string) string { return "manifest." + sandboxID + "." + id }

func indexKey(sandboxID, id string) string { return sandboxID + "." + id }

// hasBlob reports whether the store holds the content of digest sum.
func (s *Store) hasBlob(ctx context.Context, sum string) (bool, error) {
	_, err := s.blobs.GetInfo(ctx, blobName(sum))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return false, nil
	}
	return err == nil, err
}

// putBlob stores content r of digest sum unless the store has it, and
// returns the bytes it added.
func (s *Store) putBlob(ctx context.Context, sum string, size int64, r io.Reader) (int64, error) {
	ok, err := s.hasBlob(ctx, sum)
	if err != nil {
		return 0, err
	}
	if ok {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, transferTimeout(size))
	defer cancel()
	if _, err := s.blobs.Put(ctx, jetstream.ObjectMeta{Name: blobName(sum)}, r); err != nil {
		return 0, storeError(err, "store a file's content")
	}
	return size, nil
}

// blob opens the stored content of digest sum, size bytes long; the
// reader must be read within transferTimeout(size).
func (s *Store) blob(ctx context.Context, sum string, size int64) (io.ReadCloser, error) {
	ctx, cancel := context.WithTimeout(ctx, transferTimeout(size))
	r, err := s.blobs.Get(ctx, blobName(sum))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("content sha256 %s: %w", sum, err)
	}
	return readCloser{r, cancel}, nil
}

// readCloser releases a transfer's deadline when its reader is closed.
type readCloser struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (r readCloser) Close() error {
	defer r.cancel()
	return r.ReadCloser.Close()
}

// save stores m's manifest, then its summary: the summary is what makes
// the checkpoint exist, so a failure between the two leaves none.
func (s *Store) save(ctx context.Context, m schemas.CheckpointManifest) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c := m.Checkpoint
	pctx, cancel := context.WithTimeout(ctx, transferTimeout(int64(len(data))))
	defer cancel()
	if _, err := s.blobs.Put(pctx, jetstream.ObjectMeta{Name: manifestName(c.SandboxID, c.ID)}, bytes.NewReader(data)); err != nil {
		return storeError(err, "store the manifest of checkpoint "+c.ID)
	}
	sum, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if _, err := s.index.Create(ctx, indexKey(c.SandboxID, c.ID), sum); err != nil {
		return storeError(err, "record checkpoint "+c.ID)
	}
	return nil
}

// List returns the checkpoints of a sandbox, oldest first. A sandbox
// without checkpoints has an empty list.
func (s *Store) List(ctx context.Context, sandboxID string) ([]schemas.Checkpoint, error) {
	keys, err := s.index.ListKeysFiltered(ctx, sandboxID+".*")
	if err != nil {
		return nil, fmt.Errorf("list the checkpoints of sandbox %s: %w", sandboxID, err)
	}
	var out []schemas.Checkpoint
	for key := range keys.Keys() {
		e, err := s.index.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", key, err)
		}
		var c schemas.Checkpoint
		if err := json.Unmarshal(e.Value(), &c); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", key, err)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b schemas.Checkpoint) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Resolve finds the checkpoint of sandboxID whose id or name is ref. An
// unknown one is CodeNotFound.
func (s *Store) Resolve(ctx context.Context, sandboxID, ref string) (schemas.Checkpoint, error) {
	if ref == "" {
		return schemas.Checkpoint{}, schemas.Errorf(schemas.CodeBadRequest, "sandbox %s: no checkpoint named (want an id or a name)", sandboxID)
	}
	list, err := s.List(ctx, sandboxID)
	if err != nil {
		return schemas.Checkpoint{}, err
	}
	for _, c := range list {
		if c.ID == ref || c.Name == ref {
			return c, nil
		}
	}
	return schemas.Checkpoint{}, schemas.Errorf(schemas.CodeNotFound, "sandbox %s has no checkpoint %q", sandboxID, ref)
}

// Manifest reads the manifest of checkpoint c.
func (s *Store) Manifest(ctx context.Context, c schemas.Checkpoint) (schemas.CheckpointManifest, error) {
	var m schemas.CheckpointManifest
	ctx, cancel := context.WithTimeout(ctx, transferTimeout(int64(c.Files)*256))
	defer cancel()
	data, err := s.blobs.GetBytes(ctx, manifestName(c.SandboxID, c.ID))
	if err != nil {
		return m, fmt.Errorf("manifest of checkpoint %s of sandbox %s: %w", c.ID, c.SandboxID, err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("manifest of checkpoint %s of sandbox %s: %w", c.ID, c.SandboxID, err)
	}
	return m, nil
}

// Delete removes checkpoint c's summary and manifest. The contents it
// shares with others stay; see docs/checkpoints.md.
func (s *Store) Delete(ctx context.Context, c schemas.Checkpoint) error {
	if err := s.index.Purge(ctx, indexKey(c.SandboxID, c.ID)); err != nil {
		return fmt.Errorf("delete checkpoint %s: %w", c.ID, err)
	}
	if err := s.blobs.Delete(ctx, manifestName(c.SandboxID, c.ID)); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("delete the manifest of checkpoint %s: %w", c.ID, err)
	}
	return nil
}
