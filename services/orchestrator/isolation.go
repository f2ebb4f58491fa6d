package orchestrator

import (
	"context"
	"strings"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/egress"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// Where a sandbox finds what isolates it.
const (
	// SandboxNATSDir holds the NATS socket.
	SandboxNATSDir = "/run/sandox-nats"
	// SandboxEgressSocket is its allowlist proxy's socket, which the
	// executor forwards from SandboxProxyAddr.
	SandboxEgressSocket = "/run/sandox/egress.sock"
	// SandboxProxyAddr is the loopback address of the proxy in the sandbox.
	SandboxProxyAddr = "127.0.0.1:3128"
)

// resolveEgress returns a sandbox's egress policy, checked.
func (w *Worker) resolveEgress(group, sandbox *schemas.Egress) (schemas.Egress, error) {
	e := schemas.ResolveEgress(group, sandbox)
	if err := e.Validate(); err != nil {
		return e, err
	}
	if _, err := egress.ParseAllowlist(e.Allow); err != nil {
		return e, schemas.Errorf(schemas.CodeBadRequest, "egress allowlist: %v", err)
	}
	if e.Policy != schemas.EgressNone && w.cfg.NATSSocket == "" {
		return e, schemas.Errorf(schemas.CodeUnsupported, "egress %s needs sandboxes reaching NATS through its socket (NATSSocket)", e.Policy)
	}
	return e, nil
}

// withNetwork isolates the sandbox by its egress policy when NATSSocket is
// set. Every policy reaches NATS through the socket's directory, mounted
// read-only. none: Docker's "none" network, only a loopback, so no
// connection to other sandboxes, the orchestrator, the host's services,
// NATS's other ports or anything else. allowlist: the same, plus its own
// filtering proxy's socket, which the executor forwards from
// SandboxProxyAddr, and HTTP(S)_PROXY pointing there. open: a bridge with
// inter-container traffic off, EgressNetwork or, when that is full, the
// next shard with room (egressShards.place). Without NATSSocket the
// sandbox joins Network as before.
func (w *Worker) withNetwork(ctx context.Context, spec *runtime.ContainerSpec, st *schemas.SandboxStatus) error {
	src := w.cfg.NATSSocket
	if src == "" {
		return nil
	}
	if strings.HasPrefix(src, "/") {
		spec.Binds = append(spec.Binds, runtime.Bind{Source: src, Target: SandboxNATSDir, ReadOnly: true})
	} else {
		if spec.ReadOnlyVolumes == nil {
			spec.ReadOnlyVolumes = map[string]string{}
		}
		spec.ReadOnlyVolumes[src] = SandboxNATSDir
	}
	spec.Network = "none"
	policy := schemas.ResolveEgress(nil, st.Egress)
	switch policy.Policy {
	case schemas.EgressOpen:
		spec.Network = w.cfg.EgressNetwork
		if w.shards != nil {
			name, err := w.shards.place(ctx, spec.Name)
			if err != nil {
				return err
			}
			spec.Network = name
		}
	case schemas.EgressAllowlist:
		allow, err := egress.ParseAllowlist(policy.Allow)
		if err != nil {
			return err
		}
		sock, err := w.egress.Open(st.ID, allow)
		if err != nil {
			return err
		}
		spec.Binds = append(spec.Binds, runtime.Bind{Source: sock, Target: SandboxEgressSocket})
		proxy := "http://" + SandboxProxyAddr
		spec.Env = append(spec.Env,
			schemas.EnvEgressProxy+"="+SandboxEgressSocket,
			"HTTP_PROXY="+proxy, "HTTPS_PROXY="+proxy, "http_proxy="+proxy, "https_proxy="+proxy,
			"NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1")
	}
	return nil
}

// pruneEgressNetworks removes the bridges of open egress that are empty
// and not needed next (egressShards.prune); it runs after the container
// is removed. A bridge it could not remove is logged, not
// returned: an empty bridge harms nothing, and the next prune or `sandox
// down` removes it.
func (w *Worker) pruneEgressNetworks(ctx context.Context, container string) error {
	if w.shards == nil {
		return nil
	}
	if err := w.shards.prune(ctx, container); err != nil {
		w.log.Warn("empty egress networks left", "err", err)
	}
	return nil
}

// withRuntime runs the sandbox under the configured OCI runtime, such as
// runsc (gVisor) or kata-runtime, for a kernel boundary of its own; "" is
// the engine's default (runc).
func (w *Worker) withRuntime(spec *runtime.ContainerSpec) {
	spec.Runtime = w.cfg.Runtime
}
