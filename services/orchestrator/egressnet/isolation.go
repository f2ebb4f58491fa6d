package egressnet

import (
	"context"
	"log/slog"
	"strings"

	"github.com/sandox/sandox/internal/egress"
	"github.com/sandox/sandox/schemas"
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

// Isolation puts each sandbox on the network its egress policy allows,
// with the NATS socket it reaches the bus through. It is safe for
// concurrent use.
type Isolation struct {
	natsSocket string
	network    string
	shards     *Shards
	proxies    *egress.Proxies
	log        *slog.Logger
}

// NewIsolation returns the isolation of sandboxes that reach NATS through
// natsSocket (a host path or a volume; "" leaves every sandbox on the
// network its container spec names, and refuses egress policies), whose
// open egress goes on network or, when shards is not nil, on the shard
// with room, and whose allowlists are served by proxies. It logs to log.
func NewIsolation(natsSocket, network string, shards *Shards, proxies *egress.Proxies, log *slog.Logger) *Isolation {
	return &Isolation{natsSocket: natsSocket, network: network, shards: shards, proxies: proxies, log: log}
}

// Check checks an egress policy as written: its fields
// (schemas.Egress.Validate) and its allowlist's destinations.
func Check(e schemas.Egress) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if _, err := egress.ParseAllowlist(e.Allow); err != nil {
		return schemas.Errorf(schemas.CodeBadRequest, "egress allowlist: %v", err)
	}
	return nil
}

// Resolve returns a sandbox's egress policy, checked, and refuses a
// policy this isolation cannot build.
func (i *Isolation) Resolve(group, sandbox *schemas.Egress) (schemas.Egress, error) {
	e := schemas.ResolveEgress(group, sandbox)
	if err := Check(e); err != nil {
		return e, err
	}
	if e.Policy != schemas.EgressNone && i.natsSocket == "" {
		return e, schemas.Errorf(schemas.CodeUnsupported, "egress %s needs sandboxes reaching NATS through its socket (NATSSocket)", e.Policy)
	}
	return e, nil
}

// Apply isolates the sandbox by its egress policy when NATSSocket is
// set. Every policy reaches NATS through the socket's directory, mounted
// read-only. none: Docker's "none" network, only a loopback, so no
// connection to other sandboxes, the orchestrator, the host's services,
// NATS's other ports or anything else. allowlist: the same, plus its own
// filtering proxy's socket, which the executor forwards from
// SandboxProxyAddr, and HTTP(S)_PROXY pointing there. open: a bridge with
// inter-container traffic off, EgressNetwork or, when that is full, the
// next shard with room (Shards.Place). Without a NATS socket the
// sandbox stays on the network its spec names.
func (i *Isolation) Apply(ctx context.Context, spec *runtime.ContainerSpec, st *schemas.SandboxStatus) error {
	src := i.natsSocket
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
		spec.Network = i.network
		if i.shards != nil {
			name, err := i.shards.Place(ctx, spec.Name)
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
		sock, err := i.proxies.Open(st.ID, allow)
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

// Prune removes the bridges of open egress that are empty
// and not needed next (Shards.Prune); it runs after the container
// is removed. A bridge it could not remove is logged, not
// returned: an empty bridge harms nothing, and the next prune or `sandox
// down` removes it.
func (i *Isolation) Prune(ctx context.Context, container string) error {
	if i.shards == nil {
		return nil
	}
	if err := i.shards.Prune(ctx, container); err != nil {
		i.log.Warn("empty egress networks left", "err", err)
	}
	return nil
}
