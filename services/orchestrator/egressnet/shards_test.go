package egressnet

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// memNetworks is an in-memory engine's networks for the unit tests, with
// the refusals of Docker's: a taken name (ErrNetworkExists), a subnet that
// overlaps another network's, removing a network with members. hidden
// subnets are refused without being listed (another engine's user took
// them between a listing and a create). It is safe for concurrent use.
type memNetworks struct {
	mu      sync.Mutex
	nets    map[string]runtime.NetworkState
	members map[string][]string
	hidden  []netip.Prefix
	// racer, when set, runs at the start of each create: another worker
	// doing something between this one's listing and its create.
	racer func(spec runtime.NetworkSpec)
}

func newMemNetworks(nets ...runtime.NetworkState) *memNetworks {
	m := &memNetworks{nets: map[string]runtime.NetworkState{}, members: map[string][]string{}}
	for _, n := range nets {
		m.nets[n.Name] = n
	}
	return m
}

func (m *memNetworks) Networks(context.Context) ([]runtime.NetworkState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]runtime.NetworkState, 0, len(m.nets))
	for _, n := range m.nets {
		out = append(out, n)
	}
	return out, nil
}

func (m *memNetworks) NetworkMembers(_ context.Context, name string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.members[name]), nil
}

func (m *memNetworks) CreateIsolatedNetwork(_ context.Context, spec runtime.NetworkSpec) error {
	if m.racer != nil {
		m.racer(spec)
	}
	m.mu.Lock()
	if _, ok := m.nets[spec.Name]; ok {
		m.mu.Unlock()
		return fmt.Errorf("create network %s: %w", spec.Name, runtime.ErrNetworkExists)
	}
	taken := slices.Clone(m.hidden)
	for _, n := range m.nets {
		taken = append(taken, n.Subnets...)
	}
	for _, p := range taken {
		if p.Overlaps(spec.Subnet) {
			m.mu.Unlock()
			return fmt.Errorf("create network %s on %s: pool overlaps with other one on this address space", spec.Name, spec.Subnet)
		}
	}
	m.nets[spec.Name] = runtime.NetworkState{Name: spec.Name, Subnets: []netip.Prefix{spec.Subnet}, Labels: spec.Labels}
	m.mu.Unlock()
	return nil
}

func (m *memNetworks) RemoveNetwork(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.members[name]) > 0 {
		return fmt.Errorf("network %s has active endpoints", name)
	}
	delete(m.nets, name)
	return nil
}

// join attaches container to network, as the engine's create does.
func (m *memNetworks) join(network, container string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.members[network] = append(m.members[network], container)
}

// leave detaches container, as the engine's remove does.
func (m *memNetworks) leave(network, container string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.members[network] = slices.DeleteFunc(m.members[network], func(c string) bool { return c == container })
}

func (m *memNetworks) names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.nets))
	for n := range m.nets {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (m *memNetworks) subnet(name string) netip.Prefix {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nets[name].Subnets[0]
}

// testOptions are the orchestrator's default options of Shards.
func testOptions() Options {
	return Options{Network: "sandox-egress", Capacity: 1000, Pool: DefaultAddressPool()}
}

func shardsFor(t *testing.T, nets *memNetworks, capacity int) *Shards {
	t.Helper()
	opts := testOptions()
	opts.Capacity = capacity
	s, err := NewShards(nets, opts)
	require.NoError(t, err)
	require.NotNil(t, s)
	return s
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func TestFreeSubnet(t *testing.T) {
	pool := mustPrefix("10.240.0.0/12")
	tests := []struct {
		name   string
		bits   int
		used   []netip.Prefix
		want   string
		wantOK bool
	}{
		{"an empty engine takes the first", 22, nil, "10.240.0.0/22", true},
		{"a taken subnet is skipped", 22, []netip.Prefix{mustPrefix("10.240.0.0/22"), mustPrefix("10.240.8.0/22")}, "10.240.4.0/22", true},
		{"a larger network overlapping the start is skipped", 22, []netip.Prefix{mustPrefix("10.240.0.0/16"), mustPrefix("172.17.0.0/16")}, "10.241.0.0/22", true},
		{"a smaller network inside a subnet takes all of it", 22, []netip.Prefix{mustPrefix("10.240.1.0/24")}, "10.240.4.0/22", true},
		{"a network covering the pool leaves none", 22, []netip.Prefix{mustPrefix("10.0.0.0/8")}, "", false},
		{"the last subnet", 13, []netip.Prefix{mustPrefix("10.240.0.0/13")}, "10.248.0.0/13", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := freeSubnet(pool, tt.bits, tt.used)
			require.Equal(t, tt.wantOK, ok)
			if ok {
				assert.Equal(t, tt.want, got.String())
			}
		})
	}
}

func TestShardNumber(t *testing.T) {
	tests := []struct {
		name string
		want int
		ok   bool
	}{
		{"sandox-egress", 0, true},
		{"sandox-egress-1", 1, true},
		{"sandox-egress-42", 42, true},
		{"sandox-egress-0", 0, false},
		{"sandox-egress-01", 0, false},
		{"sandox-egress-x", 0, false},
		{"sandox-egress-", 0, false},
		{"sandox", 0, false},
		{"sandox-egressive-1", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ok := shardNumber("sandox-egress", tt.name)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, n)
			if ok {
				assert.Equal(t, tt.name, shardName("sandox-egress", n))
			}
		})
	}
}

func TestAddressPoolCheck(t *testing.T) {
	tests := []struct {
		name     string
		pool     AddressPool
		capacity int
		wantErr  string
	}{
		{"the default", DefaultAddressPool(), 1000, ""},
		{"the bridge's limit", AddressPool{Base: "10.240.0.0/12", Size: 21}, 1023, ""},
		{"past the bridge's limit", AddressPool{Base: "10.240.0.0/12", Size: 21}, 1024, "a Linux bridge holds 1023"},
		{"past the subnet", AddressPool{Base: "10.240.0.0/12", Size: 24}, 1000, "a /24 subnet has 253 addresses"},
		{"a subnet larger than the pool", AddressPool{Base: "10.240.0.0/16", Size: 12}, 10, "between /16 and /30"},
		{"not a CIDR", AddressPool{Base: "10.240.0.0", Size: 22}, 10, "want an IPv4 CIDR"},
		{"IPv6", AddressPool{Base: "fd00::/48", Size: 64}, 10, "want an IPv4 CIDR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.pool.check(tt.capacity)
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestNewEgressShardsOff(t *testing.T) {
	tests := []struct {
		name string
		rt   runtime.EgressRuntime
		opts func(*Options)
	}{
		{"a runtime without networks", nil, func(*Options) {}},
		{"capacity 0", newMemNetworks(), func(o *Options) { o.Capacity = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions()
			tt.opts(&opts)
			s, err := NewShards(tt.rt, opts)
			require.NoError(t, err)
			assert.Nil(t, s)
		})
	}
	opts := testOptions()
	opts.Capacity = 2000
	_, err := NewShards(newMemNetworks(), opts)
	assert.ErrorContains(t, err, "a Linux bridge holds")
}

// TestEgressShardsPlace fills shards of two: the first two containers go
// on the existing first shard (on a default-pool subnet), the third on a
// new one on the pool's first free subnet, and a placement counts before
// the engine lists its container.
func TestEgressShardsPlace(t *testing.T) {
	ctx := t.Context()
	nets := newMemNetworks(
		runtime.NetworkState{Name: "sandox-egress", Subnets: []netip.Prefix{mustPrefix("172.18.0.0/16")}},
		runtime.NetworkState{Name: "someone-else", Subnets: []netip.Prefix{mustPrefix("10.240.0.0/22")}},
	)
	s := shardsFor(t, nets, 2)
	var got []string
	for i := range 5 {
		name, err := s.Place(ctx, fmt.Sprintf("sb-%d", i))
		require.NoError(t, err)
		got = append(got, name)
		if i%2 == 0 {
			// Half the creates reach the engine before the next placement.
			nets.join(name, fmt.Sprintf("sb-%d", i))
		}
	}
	assert.Equal(t, []string{"sandox-egress", "sandox-egress", "sandox-egress-1", "sandox-egress-1", "sandox-egress-2"}, got)
	assert.Equal(t, "10.240.4.0/22", nets.subnet("sandox-egress-1").String())
	assert.Equal(t, "10.240.8.0/22", nets.subnet("sandox-egress-2").String())
	assert.Equal(t, map[string]string{runtime.LabelManaged: "true", runtime.LabelEgressShard: "1"}, nets.nets["sandox-egress-1"].Labels)
}

// TestEgressShardsFirstShardMade makes the first shard when a fresh
// engine has none, on the pool, labelled with the worker's system.
func TestEgressShardsFirstShardMade(t *testing.T) {
	nets := newMemNetworks()
	opts := testOptions()
	opts.System = "sys"
	s, err := NewShards(nets, opts)
	require.NoError(t, err)
	name, err := s.Place(t.Context(), "sb")
	require.NoError(t, err)
	assert.Equal(t, "sandox-egress", name)
	assert.Equal(t, "10.240.0.0/22", nets.subnet(name).String())
	assert.Equal(t, map[string]string{runtime.LabelManaged: "true", runtime.LabelSystem: "sys", runtime.LabelEgressShard: "0"}, nets.nets[name].Labels)
}

// TestEgressShardsReservationExpires: a placement whose create never
// reached the engine stops counting after reservationTTL.
func TestEgressShardsReservationExpires(t *testing.T) {
	nets := newMemNetworks(runtime.NetworkState{Name: "sandox-egress"})
	s := shardsFor(t, nets, 1)
	now := time.Now()
	s.now = func() time.Time { return now }
	name, err := s.Place(t.Context(), "failed-create")
	require.NoError(t, err)
	assert.Equal(t, "sandox-egress", name)
	name, err = s.Place(t.Context(), "next")
	require.NoError(t, err)
	assert.Equal(t, "sandox-egress-1", name, "the first shard is full while its placement counts")
	now = now.Add(reservationTTL + time.Second)
	name, err = s.Place(t.Context(), "later")
	require.NoError(t, err)
	assert.Equal(t, "sandox-egress", name, "the failed create stopped counting")
}

// TestEgressShardsTwoWorkers: two workers on one engine share its shards:
// the engine's count is the truth, and a shard that the other made
// meanwhile is used, not made twice.
func TestEgressShardsTwoWorkers(t *testing.T) {
	ctx := t.Context()
	nets := newMemNetworks(runtime.NetworkState{Name: "sandox-egress", Subnets: []netip.Prefix{mustPrefix("10.240.0.0/22")}})
	a, b := shardsFor(t, nets, 2), shardsFor(t, nets, 2)
	place := func(s *Shards, c string) string {
		t.Helper()
		name, err := s.Place(ctx, c)
		require.NoError(t, err)
		nets.join(name, c)
		return name
	}
	assert.Equal(t, "sandox-egress", place(a, "a1"))
	assert.Equal(t, "sandox-egress", place(b, "b1"))
	// b makes shard 1, and places a sandbox there, while a is between
	// its listing and its create of the same shard.
	nets.racer = func(runtime.NetworkSpec) {
		nets.racer = nil
		assert.Equal(t, "sandox-egress-1", place(b, "b2"))
	}
	assert.Equal(t, "sandox-egress-1", place(a, "a2"))
	assert.Equal(t, "sandox-egress-2", place(a, "a3"))
	assert.Equal(t, []string{"sandox-egress", "sandox-egress-1", "sandox-egress-2"}, nets.names())
	assert.Equal(t, "10.240.4.0/22", nets.subnet("sandox-egress-1").String())
}

// TestEgressShardsSubnetTaken: a subnet the listing showed free but the
// engine refuses is skipped.
func TestEgressShardsSubnetTaken(t *testing.T) {
	nets := newMemNetworks(runtime.NetworkState{Name: "sandox-egress", Subnets: []netip.Prefix{mustPrefix("10.240.0.0/22")}})
	nets.hidden = []netip.Prefix{mustPrefix("10.240.4.0/22"), mustPrefix("10.240.8.0/22")}
	nets.join("sandox-egress", "a")
	s := shardsFor(t, nets, 1)
	name, err := s.Place(t.Context(), "b")
	require.NoError(t, err)
	assert.Equal(t, "sandox-egress-1", name)
	assert.Equal(t, "10.240.12.0/22", nets.subnet(name).String())

	nets.hidden = []netip.Prefix{mustPrefix("10.0.0.0/8")}
	nets.join(name, "b")
	_, err = s.Place(t.Context(), "c")
	assert.ErrorContains(t, err, "pool overlaps")
}

// TestEgressShardsFull: a pool of two subnets holds two shards.
func TestEgressShardsFull(t *testing.T) {
	nets := newMemNetworks()
	opts := testOptions()
	opts.Capacity = 1
	opts.Pool = AddressPool{Base: "10.240.0.0/29", Size: 30}
	s, err := NewShards(nets, opts)
	require.NoError(t, err)
	for _, c := range []string{"a", "b"} {
		_, err := s.Place(t.Context(), c)
		require.NoError(t, err)
	}
	_, err = s.Place(t.Context(), "c")
	assert.ErrorContains(t, err, "every bridge of open egress is full")
	var se *schemas.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, schemas.CodeResourceExhausted, se.Code)
}

// TestEgressShardsPrune removes the empty shards beyond the first but the
// one where the next sandbox goes.
func TestEgressShardsPrune(t *testing.T) {
	tests := []struct {
		name    string
		members map[string][]string
		want    []string
	}{
		{"all empty: the first stays", map[string][]string{}, []string{"sandox-egress"}},
		{"the first full: the next stays", map[string][]string{"sandox-egress": {"a", "b"}}, []string{"sandox-egress", "sandox-egress-1"}},
		{"a shard in use stays", map[string][]string{"sandox-egress-2": {"c"}}, []string{"sandox-egress", "sandox-egress-2"}},
		{"full first two, the third stays", map[string][]string{"sandox-egress": {"a", "b"}, "sandox-egress-1": {"c", "d"}}, []string{"sandox-egress", "sandox-egress-1", "sandox-egress-2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nets := newMemNetworks(runtime.NetworkState{Name: "sandox-egress"}, runtime.NetworkState{Name: "sandox-egress-1"}, runtime.NetworkState{Name: "sandox-egress-2"}, runtime.NetworkState{Name: "other"})
			for n, cs := range tt.members {
				for _, c := range cs {
					nets.join(n, c)
				}
			}
			s := shardsFor(t, nets, 2)
			require.NoError(t, s.Prune(t.Context(), ""))
			assert.Equal(t, append([]string{"other"}, tt.want...), nets.names())
		})
	}
}

// TestEgressShardsPruneKeepsPlaced: a shard this worker just placed a
// sandbox on is not removed before the engine lists its container.
func TestEgressShardsPruneKeepsPlaced(t *testing.T) {
	nets := newMemNetworks(runtime.NetworkState{Name: "sandox-egress"})
	nets.join("sandox-egress", "a")
	s := shardsFor(t, nets, 1)
	name, err := s.Place(t.Context(), "b")
	require.NoError(t, err)
	require.Equal(t, "sandox-egress-1", name)
	nets.leave("sandox-egress", "a")
	require.NoError(t, s.Prune(t.Context(), "a"))
	assert.Equal(t, []string{"sandox-egress", "sandox-egress-1"}, nets.names())
	// b's create failed, or b ended before the engine listed it there.
	require.NoError(t, s.Prune(t.Context(), "b"))
	assert.Equal(t, []string{"sandox-egress"}, nets.names())
}
