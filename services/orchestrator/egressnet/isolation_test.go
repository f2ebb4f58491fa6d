package egressnet

import (
	"log/slog"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/egress"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// TestIsolationResolve checks a sandbox's egress policy: the group's
// unless the sandbox names one, a bad allowlist refused, and no policy
// but none without a NATS socket.
func TestIsolationResolve(t *testing.T) {
	with := NewIsolation("sandox-nats-socket", "sandox-egress", nil, &egress.Proxies{}, slog.New(slog.DiscardHandler))
	without := NewIsolation("", "sandox-egress", nil, &egress.Proxies{}, slog.New(slog.DiscardHandler))
	open := &schemas.Egress{Policy: schemas.EgressOpen}
	tests := []struct {
		name    string
		iso     *Isolation
		group   *schemas.Egress
		sandbox *schemas.Egress
		want    schemas.EgressPolicy
		code    schemas.ErrorCode
	}{
		{name: "the group's", iso: with, group: open, want: schemas.EgressOpen},
		{name: "the sandbox's", iso: with, group: open, sandbox: &schemas.Egress{Policy: schemas.EgressNone}, want: schemas.EgressNone},
		{name: "a bad allowlist", iso: with, sandbox: &schemas.Egress{Policy: schemas.EgressAllowlist, Allow: []string{"exa mple.com"}}, code: schemas.CodeBadRequest},
		{name: "open without a socket", iso: without, sandbox: open, code: schemas.CodeUnsupported},
		{name: "none without a socket", iso: without, sandbox: &schemas.Egress{Policy: schemas.EgressNone}, want: schemas.EgressNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.iso.Resolve(tt.group, tt.sandbox)
			if tt.code != "" {
				var se *schemas.Error
				require.ErrorAs(t, err, &se)
				assert.Equal(t, tt.code, se.Code)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Policy)
		})
	}
}

// TestIsolationApply checks the container spec of each policy: the NATS
// socket's directory mounted read-only (a bind for a host path, a volume
// otherwise), no network for none, a proxy socket and its environment for
// an allowlist, and a shard for open egress; without a socket, nothing.
func TestIsolationApply(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	proxies := &egress.Proxies{Dir: t.TempDir(), Log: log}
	t.Cleanup(func() { _ = proxies.Close("sb-allow") })
	nets := newMemNetworks(runtime.NetworkState{Name: "sandox-egress", Subnets: []netip.Prefix{mustPrefix("10.240.0.0/22")}})
	shards, err := NewShards(nets, testOptions())
	require.NoError(t, err)
	ctx := t.Context()

	iso := NewIsolation("sandox-nats-socket", "sandox-egress", shards, proxies, log)
	spec := runtime.ContainerSpec{Name: "c-none", Network: "bridge"}
	require.NoError(t, iso.Apply(ctx, &spec, &schemas.SandboxStatus{ID: "sb-none", Egress: &schemas.Egress{Policy: schemas.EgressNone}}))
	assert.Equal(t, "none", spec.Network)
	assert.Equal(t, map[string]string{"sandox-nats-socket": SandboxNATSDir}, spec.ReadOnlyVolumes)

	spec = runtime.ContainerSpec{Name: "c-allow"}
	require.NoError(t, iso.Apply(ctx, &spec, &schemas.SandboxStatus{ID: "sb-allow", Egress: &schemas.Egress{Policy: schemas.EgressAllowlist, Allow: []string{"example.com"}}}))
	assert.Equal(t, "none", spec.Network)
	assert.Contains(t, spec.Binds, runtime.Bind{Source: proxies.SocketPath("sb-allow"), Target: SandboxEgressSocket})
	assert.Contains(t, spec.Env, "HTTPS_PROXY=http://"+SandboxProxyAddr)
	assert.Contains(t, spec.Env, schemas.EnvEgressProxy+"="+SandboxEgressSocket)

	spec = runtime.ContainerSpec{Name: "c-open"}
	require.NoError(t, iso.Apply(ctx, &spec, &schemas.SandboxStatus{ID: "sb-open", Egress: &schemas.Egress{Policy: schemas.EgressOpen}}))
	assert.Equal(t, "sandox-egress", spec.Network)
	require.NoError(t, iso.Prune(ctx, "c-open"))

	byPath := NewIsolation("/run/nats", "sandox-egress", nil, proxies, log)
	spec = runtime.ContainerSpec{Name: "c-path"}
	require.NoError(t, byPath.Apply(ctx, &spec, &schemas.SandboxStatus{ID: "sb-path", Egress: &schemas.Egress{Policy: schemas.EgressOpen}}))
	assert.Equal(t, "sandox-egress", spec.Network, "without shards, open egress joins the network")
	assert.Equal(t, []runtime.Bind{{Source: "/run/nats", Target: SandboxNATSDir, ReadOnly: true}}, spec.Binds)
	require.NoError(t, byPath.Prune(ctx, "c-path"), "without shards there is nothing to prune")

	plain := NewIsolation("", "sandox-egress", nil, proxies, log)
	spec = runtime.ContainerSpec{Name: "c-plain", Network: "sandox"}
	require.NoError(t, plain.Apply(ctx, &spec, &schemas.SandboxStatus{ID: "sb-plain"}))
	assert.Equal(t, runtime.ContainerSpec{Name: "c-plain", Network: "sandox"}, spec, "without a socket the spec is left alone")
}
