package pool

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// Maker makes and removes the pooled sandboxes of the worker's host. The
// orchestrator's sandbox lifecycle implements it.
type Maker interface {
	// Fill creates and starts one pooled sandbox made of src on this host
	// and returns its pool id. On failure nothing of it is left.
	Fill(ctx context.Context, src Source) (string, error)
	// Remove removes a pooled sandbox of this host that was never
	// claimed: everything of it.
	Remove(ctx context.Context, poolID string) error
	// Revoke revokes the identity of sandbox id.
	Revoke(ctx context.Context, id string) error
}

// Config is a worker's pools.
type Config struct {
	// Worker is the worker's name, which the records of its pooled
	// sandboxes carry (SandboxStatus.PoolWorker).
	Worker string
	// Host is the worker's host: its pooled sandboxes run there.
	Host string
	// Size, Compute and Idle are the default pool's: 0 keeps none.
	Size    int
	Compute schemas.ComputeResources
	Idle    time.Duration
	// CanUpdate says whether the runtime can change a running
	// container's limits, so that a claim may ask for other limits than
	// the pool's.
	CanUpdate bool
	// CredsDir holds the credentials directories of pooled sandboxes
	// (CredsDir/<pool id>.d, identity.Identities.PoolDir), which Reap
	// removes when their sandbox's record is gone; "" when the worker
	// writes none.
	CredsDir string
}

// Pools is a worker's warm pools, keyed by group id ("" for the default
// pool). It is safe for concurrent use. Lock order: the set's mu before a
// pool's.
type Pools struct {
	cfg     Config
	maker   Maker
	claimer Claimer
	measure func(context.Context) (resources.Host, error)
	egress  EgressResolver
	store   *state.Store
	nc      *nats.Conn
	log     *slog.Logger

	mu    sync.Mutex
	pools map[string]*warm
	// ended remembers, per group id, the creation time of a group whose
	// pool was drained by end_group, so that the pool loop does not fill
	// it again while the group's record is still there.
	ended map[string]time.Time
	// kick wakes the pool loop.
	kick chan struct{}
	// hosts keeps the engine's host for claims.
	hosts hostCache
}

// EgressResolver resolves a sandbox's egress policy from its group's and
// its own, as a create does.
type EgressResolver interface {
	Resolve(group, sandbox *schemas.Egress) (schemas.Egress, error)
}

// Parts are what the pools act through: maker makes and removes pooled
// sandboxes, claimer hands them over, measure measures the host (for the
// limits a claim resolves) and egress resolves a claim's egress policy.
type Parts struct {
	Maker   Maker
	Claimer Claimer
	Measure func(context.Context) (resources.Host, error)
	Egress  EgressResolver
}

// New returns the pools of cfg, with the default pool when cfg.Size is
// more than 0. store holds the sandbox and group records; nc answers on
// the worker's pool subject and asks other workers whether they live. It
// does not fill anything until Run.
func New(cfg Config, parts Parts, store *state.Store, nc *nats.Conn, log *slog.Logger) *Pools {
	s := &Pools{
		cfg: cfg, maker: parts.Maker, claimer: parts.Claimer, measure: parts.Measure, egress: parts.Egress,
		store: store, nc: nc, log: log,
		pools: map[string]*warm{}, ended: map[string]time.Time{}, kick: make(chan struct{}, 1),
	}
	if cfg.Size > 0 {
		s.pools[""] = newWarm(Source{Compute: cfg.Compute}, cfg.Size, cfg.Idle)
	}
	return s
}

// Wake asks the pool loop to check the pools now. It does not block.
func (s *Pools) Wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Ready returns how many sandboxes the pool of group ("" for the default
// pool) has ready to be claimed; 0 without such a pool.
func (s *Pools) Ready(group string) int {
	if p := s.get(group); p != nil {
		return p.count()
	}
	return 0
}

// Has reports whether the worker keeps a pool for group ("" for the
// default pool).
func (s *Pools) Has(group string) bool { return s.get(group) != nil }

// get returns the pool of key, or nil.
func (s *Pools) get(key string) *warm {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pools[key]
}

// remove forgets the pool of key and returns it, or nil.
func (s *Pools) remove(key string) *warm {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pools[key]
	delete(s.pools, key)
	return p
}

// all returns every pool, the default one first, then by group id.
func (s *Pools) all() []*warm {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := slices.Sorted(maps.Keys(s.pools))
	out := make([]*warm, 0, len(keys))
	for _, k := range keys {
		out = append(out, s.pools[k])
	}
	return out
}

// add makes pool id ready in p, unless p is no longer one of the set's
// pools (its group ended while the sandbox was made): ok is then false.
func (s *Pools) add(p *warm, id string) (ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pools[p.src.Group] != p {
		return false
	}
	p.put(id)
	return true
}

// ownedHere reports whether a sandbox placed on host is this worker's
// host's: its own host, or "" (a record from before placement).
func (s *Pools) ownedHere(host string) bool { return host == "" || host == s.cfg.Host }
