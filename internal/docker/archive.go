package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/sandox/sandox/services/orchestrator/runtime"
)

var _ runtime.Archiver = (*Runtime)(nil)

// Archive returns a tar stream of the directory dir of container id, read
// through the engine's archive API (docker cp). The caller closes it.
func (r *Runtime) Archive(ctx context.Context, id, dir string) (io.ReadCloser, error) {
	rc, _, err := r.c.api.CopyFromContainer(ctx, id, dir)
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("archive %s of container %s", dir, id))
	}
	return rc, nil
}

// Extract unpacks the tar stream rd into the directory dir of container
// id through the engine's archive API, keeping the owners in its headers.
func (r *Runtime) Extract(ctx context.Context, id, dir string, rd io.Reader) error {
	if err := r.c.api.CopyToContainer(ctx, id, dir, rd, container.CopyToContainerOptions{}); err != nil {
		return notFound(err, fmt.Sprintf("extract into %s of container %s", dir, id))
	}
	return nil
}

// Exec runs cmd in the running container id as user, waits for it to
// exit, and returns its combined output and exit code.
func (r *Runtime) Exec(ctx context.Context, id, user string, cmd []string) (runtime.ExecResult, error) {
	created, err := r.c.api.ContainerExecCreate(ctx, id, container.ExecOptions{User: user, Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return runtime.ExecResult{}, notFound(err, "exec in container "+id)
	}
	att, err := r.c.api.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return runtime.ExecResult{}, fmt.Errorf("attach to exec in container %s: %w", id, err)
	}
	defer att.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, att.Reader); err != nil {
		return runtime.ExecResult{}, fmt.Errorf("read exec output in container %s: %w", id, err)
	}
	ins, err := r.c.api.ContainerExecInspect(ctx, created.ID)
	if err != nil {
		return runtime.ExecResult{}, fmt.Errorf("inspect exec in container %s: %w", id, err)
	}
	return runtime.ExecResult{ExitCode: ins.ExitCode, Output: out.String()}, nil
}
