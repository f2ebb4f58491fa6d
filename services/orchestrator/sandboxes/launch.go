package sandboxes

import (
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/identity"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// UID is the uid and gid of images.SandboxUser.
const UID = 10001

// Workspace is where a sandbox's workspace volume is mounted.
const Workspace = schemas.DefaultWorkspace

// containerSpec is how a sandbox runs: unprivileged, every capability
// dropped, a read-only root file system, a writable workspace volume,
// /tmp and /dev/shm of bounded size (sandboxTmpfs), its resource limits,
// and what the executor needs to reach NATS.
// It never gets the Docker socket or any secret beyond its own.
func (s *Service) containerSpec(st *schemas.SandboxStatus, labels map[string]string) runtime.ContainerSpec {
	r := st.Resources
	return runtime.ContainerSpec{
		Name:         runtime.ContainerName(st.ID),
		Image:        st.Image,
		Labels:       labels,
		User:         images.SandboxUser,
		Env:          s.executorEnv(st).Environ(),
		Network:      s.cfg.Network,
		NanoCPUs:     r.NanoCPUs,
		CPUSet:       r.CPUSet,
		MemoryBytes:  r.MemoryBytes,
		PIDs:         r.PIDs,
		ReadOnlyRoot: true,
		Hardened:     true,
		Init:         true,
		Tmpfs:        s.sandboxTmpfs(),
		Volumes:      map[string]string{runtime.VolumeName(st.ID): Workspace},
	}
}

// executorEnv is what the sandbox's executor reads from its environment:
// who it is, where NATS is, the families it serves, its disk limit and the
// package index of its egress policy.
func (s *Service) executorEnv(st *schemas.SandboxStatus) schemas.ExecutorEnv {
	env := schemas.ExecutorEnv{
		SandboxID: st.ID,
		GroupID:   st.GroupID,
		NATSURL:   s.cfg.SandboxNATSURL,
		Families:  st.Families,
		Workspace: Workspace,
		DiskBytes: st.Resources.DiskBytes,
		Pooled:    st.Pooled,
		// A pooled executor's budget is the pool's, which is the same.
		StreamBytes: s.cfg.StreamBudget,
		Webhooks:    s.cfg.WebhookAllow,
		// The executor tells, after each batch, whether it changed the
		// workspace: the trigger of automatic checkpoints.
		WatchWorkspace: st.Checkpoints != nil && st.Checkpoints.Auto,
	}
	if s.cfg.CredsDir != "" {
		env.NATSCreds = identity.CredsPath
	}
	if st.Egress != nil {
		env.PackageIndex = st.Egress.PackageIndex
	}
	return env
}

// sandboxTmpfs is every writable place of a sandbox besides /workspace,
// each bounded: /tmp and /dev/shm are tmpfs of a set size, counted in the
// sandbox's memory. /dev/mqueue, which the engine would mount writable,
// is hidden under an empty read-only tmpfs: nothing in a sandbox needs to
// see POSIX message queues as files. docs/architecture.md lists them.
func (s *Service) sandboxTmpfs() map[string]string {
	return map[string]string{
		"/tmp":        "rw,nosuid,nodev,size=" + s.cfg.TmpSize + ",mode=1777",
		"/dev/shm":    "rw,nosuid,nodev,noexec,size=" + s.cfg.ShmSize + ",mode=1777",
		"/dev/mqueue": "ro,nosuid,nodev,noexec,size=4k,mode=0555",
	}
}

// withRuntime runs the sandbox under the configured OCI runtime, such as
// runsc (gVisor) or kata-runtime, for a kernel boundary of its own; "" is
// the engine's default (runc).
func (s *Service) withRuntime(spec *runtime.ContainerSpec) {
	spec.Runtime = s.cfg.Runtime
}
