// Package checkpoints saves a sandbox's workspace on the NATS backbone and
// puts it back: checkpoint, list, diff, rollback, and the restore that
// gives a forked sandbox its files.
//
// A checkpoint is read out of the sandbox's container through the engine's
// archive API (docker cp), never through the sandbox itself, and stored
// outside it: each regular file's content once, in a JetStream object
// store named by its SHA-256 (BlobBucket), so a checkpoint costs only the
// files that changed since any earlier one; its manifest (path, type,
// mode, size, mtime, digest, link target of every entry) in the same
// store; and a summary in a key-value bucket (IndexBucket) keyed by
// sandbox and checkpoint id, which lists a sandbox's checkpoints without
// reading a manifest. A rogue agent that owns its workspace cannot reach
// them, and they outlive the sandbox and its host.
//
// A rollback stages the checkpoint's files in the workspace volume first
// (a full disk fails there, before anything is touched), then swaps the
// staged tree for the current one with renames, run in the container as
// the sandbox's uid, undoing the renames if one fails. docs/checkpoints.md
// describes the whole design and its costs.
package checkpoints
