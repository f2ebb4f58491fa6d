package runtime

import (
	"context"
	"io"
)

// Archiver copies a container's files out and in as tar streams, and runs
// a command inside a running container: what checkpoints need to read a
// workspace, restore it, and swap a staged copy into place. It is an
// optional ability of an Engine.
type Archiver interface {
	// Archive returns a tar stream of the directory dir of container id;
	// its entries are named dir's base name, then the paths below it.
	// The caller closes the stream.
	Archive(ctx context.Context, id, dir string) (io.ReadCloser, error)
	// Extract unpacks the tar stream r into the directory dir of container
	// id (created or running), keeping the owners and modes its headers
	// give. dir must lie on a writable volume.
	Extract(ctx context.Context, id, dir string, r io.Reader) error
	// Exec runs cmd in the running container id as user and blocks until
	// it exits; it returns the command's combined output and exit code.
	// The error is for a command that could not be run at all.
	Exec(ctx context.Context, id, user string, cmd []string) (ExecResult, error)
}

// ExecResult is how a command run by Archiver.Exec ended.
type ExecResult struct {
	ExitCode int
	Output   string
}
