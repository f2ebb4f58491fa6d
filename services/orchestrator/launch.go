package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sandox/sandox/schemas"
)

// SandboxUser is the unprivileged user sandboxes run as.
const SandboxUser = "10001:10001"

// sandboxUID is the uid and gid of SandboxUser.
const sandboxUID = 10001

// workspaceDir is where a sandbox's workspace volume is mounted.
const workspaceDir = schemas.DefaultWorkspace

// containerSpec is how a sandbox runs: unprivileged, every capability
// dropped, a read-only root file system, a writable workspace volume,
// /tmp and /dev/shm of bounded size (sandboxTmpfs), its resource limits,
// and what the executor needs to reach NATS.
// It never gets the Docker socket or any secret beyond its own.
func (w *Worker) containerSpec(st *schemas.SandboxStatus, labels map[string]string) ContainerSpec {
	r := st.Resources
	return ContainerSpec{
		Name:         ContainerName(st.ID),
		Image:        st.Image,
		Labels:       labels,
		User:         SandboxUser,
		Env:          w.executorEnv(st).Environ(),
		Network:      w.cfg.Network,
		NanoCPUs:     r.NanoCPUs,
		CPUSet:       r.CPUSet,
		MemoryBytes:  r.MemoryBytes,
		PIDs:         r.PIDs,
		ReadOnlyRoot: true,
		Hardened:     true,
		Init:         true,
		Tmpfs:        w.sandboxTmpfs(),
		Volumes:      map[string]string{VolumeName(st.ID): workspaceDir},
	}
}

// executorEnv is what the sandbox's executor reads from its environment:
// who it is, where NATS is, the families it serves and its disk limit.
func (w *Worker) executorEnv(st *schemas.SandboxStatus) schemas.ExecutorEnv {
	env := schemas.ExecutorEnv{
		SandboxID: st.ID,
		GroupID:   st.GroupID,
		NATSURL:   w.cfg.SandboxNATSURL,
		Families:  st.Families,
		Workspace: workspaceDir,
		DiskBytes: st.Resources.DiskBytes,
	}
	if w.cfg.CredsDir != "" {
		env.NATSCreds = SandboxCredsPath
	}
	return env
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
	_, err := w.awaitReady(ctx, st)
	return err
}

// awaitReady is waitReady returning the executor's answer: the tool modules
// it serves. An answer that is not an ExecutorReady (an executor older than
// the answer) counts as ready, with no modules.
func (w *Worker) awaitReady(ctx context.Context, st schemas.SandboxStatus) (schemas.ExecutorReady, error) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.ReadyTimeout)
	defer cancel()
	for {
		pctx, pcancel := context.WithTimeout(ctx, 250*time.Millisecond)
		m, err := w.nc.RequestWithContext(pctx, schemas.PingSubject(st.ID), nil)
		pcancel()
		if err == nil {
			var ready schemas.ExecutorReady
			if err := json.Unmarshal(m.Data, &ready); err != nil {
				w.log.Warn("the executor's ready answer is not an ExecutorReady", "sandbox", st.ID, "err", err)
			}
			return ready, nil
		}
		state, err := w.rt.Inspect(ctx, st.Container)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return schemas.ExecutorReady{}, fmt.Errorf("sandbox %s: %w", st.ID, err)
		}
		if err == nil && !state.Running {
			logs, _ := w.rt.Logs(context.WithoutCancel(ctx), st.Container, 20)
			return schemas.ExecutorReady{}, schemas.Errorf(schemas.CodeUnavailable, "sandbox %s exited during start (exit code %d, oom killed %t): %s", st.ID, state.ExitCode, state.OOMKilled, logs)
		}
		if ctx.Err() != nil {
			return schemas.ExecutorReady{}, schemas.Errorf(schemas.CodeTimeout, "sandbox %s did not answer within %s", st.ID, w.cfg.ReadyTimeout)
		}
	}
}
