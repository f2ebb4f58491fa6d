package schemas

import "time"

// The checkpoint commands, each published on CommandSubject(kind) with
// Command.Checkpoint set, and answered, like every command, on
// ResultSubject. docs/checkpoints.md describes them.
const (
	// TakeCheckpoint saves the sandbox's workspace; the result's
	// Checkpoints holds the new checkpoint.
	TakeCheckpoint CommandKind = "checkpoint"
	// ListCheckpoints answers with the sandbox's checkpoints, oldest
	// first, each with the paths changed in the workspace since it when
	// the sandbox is running.
	ListCheckpoints CommandKind = "list_checkpoints"
	// DiffCheckpoints answers with the paths added, changed and removed
	// from one checkpoint to another (or to the workspace now).
	DiffCheckpoints CommandKind = "diff_checkpoints"
	// RollbackSandbox puts the sandbox's workspace back as a checkpoint
	// saved it; the result's Checkpoints holds that checkpoint.
	RollbackSandbox CommandKind = "rollback"
)

// CheckpointRequest is what a checkpoint command asks for.
type CheckpointRequest struct {
	// Name, for TakeCheckpoint, names the new checkpoint (optional; the
	// same rules as a sandbox id, unique within the sandbox).
	Name string `json:"name,omitempty"`
	// Ref, for RollbackSandbox and DiffCheckpoints, is a checkpoint's id
	// or name.
	Ref string `json:"ref,omitempty"`
	// To, for DiffCheckpoints, is the checkpoint (id or name) to compare
	// Ref with; empty compares with the workspace now.
	To string `json:"to,omitempty"`
}

// Checkpoint describes one saved state of a sandbox's workspace. Its
// files live in the checkpoint store on the NATS backbone, not in the
// sandbox, so it outlives its sandbox and its host.
type Checkpoint struct {
	ID        string    `json:"id"`
	Name      string    `json:"name,omitempty"`
	SandboxID string    `json:"sandbox_id"`
	GroupID   string    `json:"group_id"`
	CreatedAt time.Time `json:"created_at"`
	// Auto is set on a checkpoint taken after a batch, not asked for.
	Auto bool `json:"auto,omitempty"`
	// Files counts the entries (files, directories, links) saved; Bytes
	// is the size of the regular files among them.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// NewBytes is what this checkpoint added to the store: the content
	// no earlier checkpoint had.
	NewBytes   int64   `json:"new_bytes"`
	DurationMS float64 `json:"duration_ms"`
	// ChangedSince, in a list, holds the paths that differ between this
	// checkpoint and the workspace now; nil when the sandbox is not
	// running.
	ChangedSince []string `json:"changed_since,omitempty"`
}

// CheckpointEntryType is the kind of a saved workspace entry.
type CheckpointEntryType string

// The entry types a checkpoint saves; anything else (devices, sockets,
// pipes) is left out.
const (
	EntryFile    CheckpointEntryType = "file"
	EntryDir     CheckpointEntryType = "dir"
	EntrySymlink CheckpointEntryType = "symlink"
)

// CheckpointFile is one entry of a checkpoint's manifest. Path is
// relative to the workspace, with '/' separators.
type CheckpointFile struct {
	Path    string              `json:"path"`
	Type    CheckpointEntryType `json:"type"`
	Mode    uint32              `json:"mode"`
	Size    int64               `json:"size,omitempty"`
	ModTime time.Time           `json:"mtime"`
	// SHA256 (hex) names a regular file's content in the store.
	SHA256 string `json:"sha256,omitempty"`
	// Link is a symlink's target.
	Link string `json:"link,omitempty"`
}

// CheckpointManifest is a checkpoint and every entry it saved, sorted by
// path.
type CheckpointManifest struct {
	Checkpoint Checkpoint       `json:"checkpoint"`
	Files      []CheckpointFile `json:"files"`
}

// CheckpointDiff lists the paths that differ between two states of a
// workspace, each list sorted. To is empty when the second state is the
// workspace now.
type CheckpointDiff struct {
	From    string   `json:"from"`
	To      string   `json:"to,omitempty"`
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
}

// CheckpointRef names a checkpoint of a sandbox, for a sandbox created
// from it (a fork).
type CheckpointRef struct {
	SandboxID string `json:"sandbox_id"`
	// Checkpoint is the checkpoint's id or name.
	Checkpoint string `json:"checkpoint"`
}

// The checkpoint store on the NATS backbone (docs/checkpoints.md).
const (
	// CheckpointIndexBucket is the key-value bucket of checkpoint
	// summaries (a Checkpoint), keyed "<sandbox id>.<checkpoint id>".
	CheckpointIndexBucket = "sandox_checkpoints"
	// CheckpointBlobBucket is the object store of file contents, each
	// named "sha256-<hex digest>", and of manifests (a
	// CheckpointManifest), named "manifest.<sandbox id>.<checkpoint id>".
	CheckpointBlobBucket = "sandox_checkpoint_blobs"
)

// CheckpointPolicy is a group's checkpoint setting.
type CheckpointPolicy struct {
	// Auto checkpoints a sandbox's workspace after every action batch that
	// changed it.
	Auto bool `json:"auto,omitempty"`
	// Keep bounds the automatic checkpoints kept per sandbox, the oldest
	// deleted first; 0 means DefaultAutoKeep. Named checkpoints are never
	// deleted.
	Keep int `json:"keep,omitempty" jsonschema:"minimum=0"`
}

// DefaultAutoKeep is how many automatic checkpoints a sandbox keeps when
// its group's policy does not say.
const DefaultAutoKeep = 10
