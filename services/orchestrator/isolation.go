package orchestrator

import (
	"strings"

	"github.com/docker/docker/api/types/mount"

	"github.com/sandox/sandox/services/docker"
)

// SandboxNATSDir is where a sandbox finds the NATS socket.
const SandboxNATSDir = "/run/sandox-nats"

// withNetwork cuts the sandbox off every network when NATSSocket is set:
// the container gets only its loopback (Docker's "none" network), so it can
// open no connection to other sandboxes, the orchestrator, the host's
// services, NATS's other ports or anything else, and reaches NATS through
// the socket's directory, mounted read-only.
func (w *Worker) withNetwork(spec *docker.ContainerSpec) {
	src := w.cfg.NATSSocket
	if src == "" {
		return
	}
	spec.Network = "none"
	spec.Aliases = nil
	m := mount.Mount{Type: mount.TypeVolume, Source: src, Target: SandboxNATSDir, ReadOnly: true}
	if strings.HasPrefix(src, "/") {
		m.Type = mount.TypeBind
	}
	spec.Mounts = append(spec.Mounts, m)
}

// withRuntime runs the sandbox under the configured OCI runtime, such as
// runsc (gVisor) or kata-runtime, for a kernel boundary of its own; "" is
// the engine's default (runc).
func (w *Worker) withRuntime(spec *docker.ContainerSpec) {
	spec.Runtime = w.cfg.Runtime
}
