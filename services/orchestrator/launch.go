package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/mount"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/docker"
)

// SandboxUser is the unprivileged user sandboxes run as.
const SandboxUser = "10001:10001"

// sandboxUID is the uid and gid of SandboxUser.
const sandboxUID = 10001

// containerSpec is how a sandbox runs: unprivileged, every capability
// dropped, a read-only root file system, a writable workspace volume,
// /tmp and /dev/shm of bounded size (sandboxTmpfs), its resource limits,
// and what the executor needs to reach NATS.
// It never gets the Docker socket or any secret beyond its own.
func (w *Worker) containerSpec(st *schemas.SandboxStatus, labels map[string]string) docker.ContainerSpec {
	r := st.Resources
	return docker.ContainerSpec{
		Name:   ContainerName(st.ID),
		Image:  st.Image,
		Labels: labels,
		User:   SandboxUser,
		Env: []string{
			"SANDOX_SANDBOX_ID=" + st.ID,
			"SANDOX_GROUP_ID=" + st.GroupID,
			"SANDOX_NATS_URL=" + w.cfg.SandboxNATSURL,
			diskEnv(r),
		},
		Network:      w.cfg.Network,
		NanoCPUs:     r.NanoCPUs,
		CPUSet:       r.CPUSet,
		Memory:       r.MemoryBytes,
		PidsLimit:    r.PIDs,
		ReadOnlyRoot: true,
		Hardened:     true,
		Init:         true,
		Tmpfs:        w.sandboxTmpfs(),
		Mounts: []mount.Mount{{
			Type:   mount.TypeVolume,
			Source: VolumeName(st.ID),
			Target: "/workspace",
		}},
	}
}

// sandboxTmpfs is every writable place of a sandbox besides /workspace,
// each bounded: /tmp and /dev/shm are tmpfs of a set size, counted in the
// sandbox's memory. /dev/mqueue, which the engine would mount writable,
// is hidden under an empty read-only tmpfs: nothing in a sandbox needs to
// see POSIX message queues as files. docs/architecture.md lists them.
func (w *Worker) sandboxTmpfs() map[string]string {
	return map[string]string{
		"/tmp":        "rw,nosuid,nodev,size=" + w.cfg.TmpSize + ",mode=1777",
		"/dev/shm":    "rw,nosuid,nodev,noexec,size=" + w.cfg.ShmSize + ",mode=1777",
		"/dev/mqueue": "ro,nosuid,nodev,noexec,size=4k,mode=0555",
	}
}

// waitReady waits until the sandbox's executor answers a ping, the
// container stops (an error with its last log lines), or ReadyTimeout.
func (w *Worker) waitReady(ctx context.Context, st schemas.SandboxStatus) error {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.ReadyTimeout)
	defer cancel()
	for {
		pctx, pcancel := context.WithTimeout(ctx, 250*time.Millisecond)
		_, err := w.nc.RequestWithContext(pctx, schemas.PingSubject(st.ID), nil)
		pcancel()
		if err == nil {
			return nil
		}
		state, err := w.rt.Inspect(ctx, st.Container)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("sandbox %s: %w", st.ID, err)
		}
		if err == nil && !state.Running {
			logs, _ := w.rt.Logs(context.WithoutCancel(ctx), st.Container, 20)
			return schemas.Errorf(schemas.CodeUnavailable, "sandbox %s exited during start (exit code %d, oom killed %t): %s", st.ID, state.ExitCode, state.OOMKilled, logs)
		}
		if ctx.Err() != nil {
			return schemas.Errorf(schemas.CodeTimeout, "sandbox %s did not answer within %s", st.ID, w.cfg.ReadyTimeout)
		}
	}
}
