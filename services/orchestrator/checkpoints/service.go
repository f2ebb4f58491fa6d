package checkpoints

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// Archiver is what checkpoints need of the container engine: read a
// directory out as a tar stream, unpack one in, and run a command in a
// running container. runtime.Archiver says what each call does.
type Archiver interface {
	Archive(ctx context.Context, id, dir string) (io.ReadCloser, error)
	Extract(ctx context.Context, id, dir string, r io.Reader) error
	Exec(ctx context.Context, id, user string, cmd []string) (runtime.ExecResult, error)
}

// Sandbox is the sandbox a checkpoint command acts on.
type Sandbox struct {
	ID      string
	GroupID string
	// Container is its running container's id.
	Container string
}

// Config says where a sandbox's workspace is and whose it is.
type Config struct {
	// Workspace is the directory saved and restored (/workspace).
	Workspace string
	// UID owns every restored entry; User ("uid:gid") runs the swap.
	UID  int
	User string
}

// Service takes, lists, compares and restores checkpoints. It is safe for
// concurrent use; the caller serializes the commands on one sandbox.
type Service struct {
	store *Store
	arch  Archiver
	cfg   Config
}

// New returns a service storing in store and reaching containers through
// arch.
func New(store *Store, arch Archiver, cfg Config) *Service {
	return &Service{store: store, arch: arch, cfg: cfg}
}

// Store is the service's checkpoint store.
func (s *Service) Store() *Store { return s.store }

// Take saves the workspace of sb as a new checkpoint named name (optional;
// a name sb has already is CodeAlreadyExists, a bad one CodeBadRequest).
// Only contents the store lacks are written. A full store is
// CodeResourceExhausted, and no checkpoint is recorded. It blocks until
// the checkpoint is stored.
func (s *Service) Take(ctx context.Context, sb Sandbox, name string, auto bool) (schemas.Checkpoint, error) {
	start := time.Now()
	if name != "" {
		if err := schemas.ValidateID("checkpoint name", name); err != nil {
			return schemas.Checkpoint{}, err
		}
		if _, err := s.store.Resolve(ctx, sb.ID, name); err == nil {
			return schemas.Checkpoint{}, schemas.Errorf(schemas.CodeAlreadyExists, "sandbox %s has a checkpoint named %q already", sb.ID, name)
		}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return schemas.Checkpoint{}, err
	}
	res, err := s.read(ctx, sb.Container, s.store.putBlob)
	if err != nil {
		return schemas.Checkpoint{}, fmt.Errorf("checkpoint sandbox %s: %w", sb.ID, err)
	}
	c := schemas.Checkpoint{
		ID: id.String(), Name: name, SandboxID: sb.ID, GroupID: sb.GroupID, CreatedAt: start.UTC(), Auto: auto,
		Files: len(res.files), Bytes: res.bytes, NewBytes: res.newBytes,
	}
	c.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	if err := s.store.save(ctx, schemas.CheckpointManifest{Checkpoint: c, Files: res.files}); err != nil {
		return schemas.Checkpoint{}, fmt.Errorf("checkpoint sandbox %s: %w", sb.ID, err)
	}
	return c, nil
}

// read archives the workspace of container and scans it, storing
// contents through sink when it is set.
func (s *Service) read(ctx context.Context, container string, sink blobSink) (scanResult, error) {
	rc, err := s.arch.Archive(ctx, container, s.cfg.Workspace)
	if err != nil {
		return scanResult{}, err
	}
	defer rc.Close()
	return scan(ctx, rc, sink)
}

// List returns the checkpoints of sandboxID, oldest first. When container
// is set (the sandbox runs), each carries the paths changed in the
// workspace since it, read with one scan that stores nothing.
func (s *Service) List(ctx context.Context, sandboxID, container string) ([]schemas.Checkpoint, error) {
	list, err := s.store.List(ctx, sandboxID)
	if err != nil || container == "" || len(list) == 0 {
		return list, err
	}
	now, err := s.read(ctx, container, nil)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: read the workspace: %w", sandboxID, err)
	}
	for i, c := range list {
		m, err := s.store.Manifest(ctx, c)
		if err != nil {
			return nil, err
		}
		list[i].ChangedSince = changedPaths(diff(m.Files, now.files))
	}
	return list, nil
}

// Diff compares checkpoint from of sandboxID with checkpoint to, or, when
// to is empty, with the workspace of container now (which must then be
// set). An unknown checkpoint is CodeNotFound.
func (s *Service) Diff(ctx context.Context, sandboxID, from, to, container string) (schemas.CheckpointDiff, error) {
	a, err := s.store.Resolve(ctx, sandboxID, from)
	if err != nil {
		return schemas.CheckpointDiff{}, err
	}
	am, err := s.store.Manifest(ctx, a)
	if err != nil {
		return schemas.CheckpointDiff{}, err
	}
	var bFiles []schemas.CheckpointFile
	var toID string
	if to != "" {
		b, err := s.store.Resolve(ctx, sandboxID, to)
		if err != nil {
			return schemas.CheckpointDiff{}, err
		}
		bm, err := s.store.Manifest(ctx, b)
		if err != nil {
			return schemas.CheckpointDiff{}, err
		}
		bFiles, toID = bm.Files, b.ID
	} else {
		if container == "" {
			return schemas.CheckpointDiff{}, schemas.Errorf(schemas.CodeConflict, "sandbox %s is not running: name a second checkpoint to compare with", sandboxID)
		}
		now, err := s.read(ctx, container, nil)
		if err != nil {
			return schemas.CheckpointDiff{}, fmt.Errorf("sandbox %s: read the workspace: %w", sandboxID, err)
		}
		bFiles = now.files
	}
	d := diff(am.Files, bFiles)
	d.From, d.To = a.ID, toID
	return d, nil
}

// PruneAuto deletes the oldest automatic checkpoints of sandboxID beyond
// the newest keep; named and asked-for checkpoints stay.
func (s *Service) PruneAuto(ctx context.Context, sandboxID string, keep int) error {
	list, err := s.store.List(ctx, sandboxID)
	if err != nil {
		return err
	}
	var auto []schemas.Checkpoint
	for _, c := range list {
		if c.Auto {
			auto = append(auto, c)
		}
	}
	for len(auto) > keep {
		if err := s.store.Delete(ctx, auto[0]); err != nil {
			return err
		}
		auto = auto[1:]
	}
	return nil
}
