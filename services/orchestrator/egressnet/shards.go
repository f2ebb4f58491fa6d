package egressnet

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// BridgePortLimit is how many ports a Linux bridge holds: BR_MAX_PORTS
// (1 << BR_PORT_BITS = 1024) in the kernel's net/bridge/br_private.h,
// of which port number 0 is reserved (find_portno in br_if.c), so 1,023
// containers at most; the next one fails to start.
const BridgePortLimit = 1023

// reservationTTL is how long a worker counts a sandbox it placed on a
// shard before the engine lists the container there: long enough for
// the create, short enough that a create that failed stops counting.
const reservationTTL = time.Minute

// Shards places sandboxes with open egress on the bridges
// Options.Network (shard 0), Network-1, Network-2, …, each holding at
// most Options.Capacity containers. The engine
// is the truth on how full a shard is, so that several workers on one
// engine share the shards; a worker adds the sandboxes it placed whose
// containers the engine does not list yet. It is safe for concurrent
// use; its mutex is held across engine calls (no other lock is taken
// under it).
type Shards struct {
	rt       runtime.EgressRuntime
	base     string
	capacity int
	pool     netip.Prefix
	bits     int
	labels   map[string]string

	// now is the clock; time.Now but in tests.
	now func() time.Time

	mu sync.Mutex
	// reserved maps a shard's name to the containers placed on it, by
	// name, and when.
	reserved map[string]map[string]time.Time
}

// Options are where a Shards puts its bridges.
type Options struct {
	// Network is the first bridge of open egress (shard 0); the others
	// are Network-1, Network-2, ….
	Network string
	// Capacity is how many containers one bridge holds before the next
	// one is used (at most BridgePortLimit, and what a subnet of Pool
	// addresses); 0 puts every sandbox with open egress on Network alone.
	Capacity int
	// Pool is where the bridges that Shards creates take their subnets.
	Pool AddressPool
	// System labels the bridges Shards creates (runtime.LabelSystem).
	System string
}

// NewShards returns the shard planner of opts on rt, or nil when rt is nil
// (the engine cannot plan networks) or sharding is off (Capacity 0): then
// every open sandbox joins Network. A pool that cannot hold Capacity
// containers per subnet is an error.
func NewShards(rt runtime.EgressRuntime, opts Options) (*Shards, error) {
	if rt == nil || opts.Capacity == 0 {
		return nil, nil
	}
	pool, err := opts.Pool.check(opts.Capacity)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{runtime.LabelManaged: "true"}
	if opts.System != "" {
		labels[runtime.LabelSystem] = opts.System
	}
	return &Shards{
		rt: rt, base: opts.Network, capacity: opts.Capacity,
		pool: pool, bits: opts.Pool.Size, labels: labels,
		reserved: map[string]map[string]time.Time{}, now: time.Now,
	}, nil
}

// AddressPool is where the bridges of open egress take their
// subnets, like an entry of the Docker daemon's default-address-pools: the
// range Base cut into subnets of prefix length Size.
type AddressPool struct {
	Base string
	Size int
}

// DefaultAddressPool is 10.240.0.0/14 cut into /22s: 256 subnets of
// 1,021 sandbox addresses each, outside Docker's default pools
// (172.17.0.0/16 to 172.31.0.0/16 and 192.168.0.0/16). It stops short of
// 10.255.0.0/16, where cloud machines often find their resolver (this
// project's development machine at 10.255.255.53): a bridge there would
// take its route.
func DefaultAddressPool() AddressPool {
	return AddressPool{Base: "10.240.0.0/14", Size: 22}
}

// check parses the pool and checks that each subnet holds capacity
// containers, and that a bridge can.
func (p AddressPool) check(capacity int) (netip.Prefix, error) {
	base, err := netip.ParsePrefix(p.Base)
	if err != nil || !base.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("egress address pool %q: want an IPv4 CIDR", p.Base)
	}
	base = base.Masked()
	if p.Size < base.Bits() || p.Size > 30 {
		return netip.Prefix{}, fmt.Errorf("egress address pool %s: subnet size /%d must be between /%d and /30", base, p.Size, base.Bits())
	}
	if capacity < 0 || capacity > BridgePortLimit {
		return netip.Prefix{}, fmt.Errorf("egress shard capacity %d: a Linux bridge holds %d containers at most", capacity, BridgePortLimit)
	}
	if hosts := usableHosts(p.Size); capacity > hosts {
		return netip.Prefix{}, fmt.Errorf("egress shard capacity %d: a /%d subnet has %d addresses for containers", capacity, p.Size, hosts)
	}
	return base, nil
}

// usableHosts is how many containers a subnet of prefix length bits
// addresses: all but the network, broadcast and gateway addresses.
func usableHosts(bits int) int { return 1<<(32-bits) - 3 }

// shardName is the network of shard n: the base name for shard 0, so
// that an install from before sharding keeps its one network.
func shardName(base string, n int) string {
	if n == 0 {
		return base
	}
	return base + "-" + strconv.Itoa(n)
}

// shardNumber returns the shard number of a network name, or false when
// the name is not one of base's shards.
func shardNumber(base, name string) (int, bool) {
	if name == base {
		return 0, true
	}
	rest, ok := strings.CutPrefix(name, base+"-")
	if !ok || rest == "" || rest[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

// maxShards bounds the shards: one per subnet of the pool.
func (s *Shards) maxShards() int { return 1 << (s.bits - s.pool.Bits()) }

// shardCapacity is how many containers shard nw holds: the configured
// capacity, less if its subnets (an existing network's, from the engine's
// default pools) address fewer.
func (s *Shards) shardCapacity(nw runtime.NetworkState) int {
	c := s.capacity
	if len(nw.Subnets) == 0 {
		return c
	}
	hosts := 0
	for _, p := range nw.Subnets {
		if p.Addr().Is4() {
			hosts += usableHosts(p.Bits())
		}
	}
	return min(c, hosts)
}

// load returns the engine's shards by number, and every subnet in use.
func (s *Shards) load(ctx context.Context) (map[int]runtime.NetworkState, []netip.Prefix, error) {
	nets, err := s.rt.Networks(ctx)
	if err != nil {
		return nil, nil, err
	}
	shards := map[int]runtime.NetworkState{}
	var used []netip.Prefix
	for _, nw := range nets {
		used = append(used, nw.Subnets...)
		if n, ok := shardNumber(s.base, nw.Name); ok {
			shards[n] = nw
		}
	}
	return shards, used, nil
}

// members counts the containers on shard name: those the engine lists
// and those this worker placed there that it does not list yet. It
// forgets placements the engine lists, and those older than
// reservationTTL. s.mu must be held.
func (s *Shards) members(ctx context.Context, name string, now time.Time) (int, error) {
	on, err := s.rt.NetworkMembers(ctx, name)
	if err != nil {
		return 0, err
	}
	n := len(on)
	res := s.reserved[name]
	for _, c := range on {
		delete(res, c)
	}
	for c, at := range res {
		if now.Sub(at) > reservationTTL {
			delete(res, c)
		} else {
			n++
		}
	}
	return n, nil
}

// Place returns the shard the container joins: the lowest-numbered one
// with room, made (on a free subnet of the pool) when every existing one
// is full. It counts the container on that shard until the engine lists
// it there. When every subnet of the pool is a full shard it fails with
// CodeResourceExhausted.
func (s *Shards) Place(ctx context.Context, container string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	shards, used, err := s.load(ctx)
	if err != nil {
		return "", err
	}
	now := s.now()
	for n := range s.maxShards() {
		nw, ok := shards[n]
		if !ok {
			if nw, err = s.create(ctx, n, used); err != nil {
				return "", err
			}
			used = append(used, nw.Subnets...)
		}
		count, err := s.members(ctx, nw.Name, now)
		if err != nil {
			return "", err
		}
		if count >= s.shardCapacity(nw) {
			continue
		}
		if s.reserved[nw.Name] == nil {
			s.reserved[nw.Name] = map[string]time.Time{}
		}
		s.reserved[nw.Name][container] = now
		return nw.Name, nil
	}
	return "", schemas.Errorf(schemas.CodeResourceExhausted, "every bridge of open egress is full: %d bridges (the pool %s in /%d subnets) of %d containers each", s.maxShards(), s.pool, s.bits, s.capacity)
}

// createAttempts bounds how many subnets create tries when the engine
// refuses one (another worker took it meanwhile).
const createAttempts = 4

// create makes shard n on the first subnet of the pool that overlaps no
// subnet in used. When another worker made it meanwhile, it returns that
// one.
func (s *Shards) create(ctx context.Context, n int, used []netip.Prefix) (runtime.NetworkState, error) {
	name := shardName(s.base, n)
	labels := map[string]string{runtime.LabelEgressShard: strconv.Itoa(n)}
	for k, v := range s.labels {
		labels[k] = v
	}
	var errs []error
	for range createAttempts {
		subnet, ok := freeSubnet(s.pool, s.bits, used)
		if !ok {
			return runtime.NetworkState{}, fmt.Errorf("no free /%d subnet left in the egress address pool %s for network %s", s.bits, s.pool, name)
		}
		err := s.rt.CreateIsolatedNetwork(ctx, runtime.NetworkSpec{Name: name, Subnet: subnet, Labels: labels})
		if err != nil && !errors.Is(err, runtime.ErrNetworkExists) {
			errs = append(errs, err)
			used = append(used, subnet)
			continue
		}
		shards, _, lerr := s.load(ctx)
		if lerr != nil {
			return runtime.NetworkState{}, lerr
		}
		if nw, ok := shards[n]; ok {
			return nw, nil
		}
		errs = append(errs, fmt.Errorf("network %s vanished after its create", name))
	}
	return runtime.NetworkState{}, errors.Join(errs...)
}

// freeSubnet returns the first subnet of prefix length bits in pool that
// overlaps none of used.
func freeSubnet(pool netip.Prefix, bits int, used []netip.Prefix) (netip.Prefix, bool) {
	step := uint32(1) << (32 - bits)
	a4 := pool.Masked().Addr().As4()
	start := uint32(a4[0])<<24 | uint32(a4[1])<<16 | uint32(a4[2])<<8 | uint32(a4[3])
	for i := range uint32(1) << (bits - pool.Bits()) {
		v := start + i*step
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), bits)
		free := true
		for _, u := range used {
			if u.Overlaps(p) {
				free = false
				break
			}
		}
		if free {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// Prune removes the empty shards beyond the first, except the
// lowest-numbered shard with room, where the next open sandbox goes:
// that one stays, so that a shard is not removed and made again as
// sandboxes come and go at a shard's edge, and so that no worker is about
// to place a sandbox on a shard being removed. A shard that a container
// joined meanwhile is not removed (the engine refuses). It first forgets
// the placement of the container gone, whose create the engine may never
// have listed. It returns the failures joined.
func (s *Shards) Prune(ctx context.Context, gone string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, res := range s.reserved {
		delete(res, gone)
	}
	shards, _, err := s.load(ctx)
	if err != nil || len(shards) < 2 {
		return err
	}
	now := s.now()
	nums := make([]int, 0, len(shards))
	for n := range shards {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	next := -1
	var errs []error
	for _, n := range nums {
		nw := shards[n]
		count, err := s.members(ctx, nw.Name, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if count >= s.shardCapacity(nw) {
			continue
		}
		if next < 0 {
			next = n
			continue
		}
		if n == 0 || count > 0 {
			continue
		}
		if err := s.rt.RemoveNetwork(ctx, nw.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(s.reserved, nw.Name)
	}
	return errors.Join(errs...)
}
