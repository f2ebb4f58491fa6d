package pool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// Shape is what a create asks that a pooled sandbox can be, resolved as
// the create would resolve it.
type Shape struct {
	Families  []string
	Limits    schemas.ResolvedResources
	Host      resources.Host
	Egress    schemas.Egress
	Databases schemas.DatabaseAccess
}

// Request is one claim: sandbox Spec (with its id) of Group, for command
// CommandID, of Shape.
type Request struct {
	Group     schemas.GroupStatus
	Spec      schemas.SandboxSpec
	CommandID string
	Shape     Shape
}

// Outcome is how a claim ended for the pooled sandbox it took.
type Outcome int

const (
	// Taken: the pooled sandbox left the pool (it became the sandbox);
	// the claim's sandbox and error are the create's answer.
	Taken Outcome = iota
	// GivenBack: the claim was refused before it touched the pooled
	// sandbox, which is ready again; the error is the create's answer.
	GivenBack
	// Failed: the hand-over failed and the pooled sandbox was removed;
	// the sandbox is to be created afresh.
	Failed
)

// Claimer hands a pooled sandbox over to the sandbox a create asks for.
// The orchestrator's sandbox lifecycle implements it.
type Claimer interface {
	// Claim turns pooled sandbox p, which fits req.Shape, into the
	// sandbox of req, and says how that ended for p.
	Claim(ctx context.Context, p schemas.SandboxStatus, req Request) (schemas.SandboxStatus, Outcome, error)
}

// NewID returns a fresh pool id (schemas.PoolIDPrefix and 16 hex digits).
func NewID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return schemas.PoolIDPrefix + hex.EncodeToString(b)
}

// Labels adds, to the labels l of pooled sandbox st's container and
// volume, the worker that keeps it and the group whose pool holds it. A
// sandbox that is not pooled adds none.
func Labels(l map[string]string, st *schemas.SandboxStatus) {
	if !st.Pooled {
		return
	}
	l[runtime.LabelPoolWorker] = st.PoolWorker
	if st.PoolGroup != "" {
		l[runtime.LabelPoolGroup] = st.PoolGroup
	}
}

// Claim makes sandbox spec.ID of group g from a pooled sandbox when one
// is ready and fits: from the group's own pool first, then from the
// default pool. ok false means create it fresh: no pool has one that
// fits, or the claim failed (the pooled sandbox is then removed). ok true
// with an error is the create's answer (an id already taken, a host that
// is full). Call it with the group's and the sandbox's locks held.
func (s *Pools) Claim(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string) (schemas.SandboxStatus, bool, error) {
	if schemas.ValidateID("sandbox", spec.ID) != nil {
		return schemas.SandboxStatus{}, false, nil
	}
	for _, key := range []string{g.ID, ""} {
		p := s.get(key)
		if p == nil {
			continue
		}
		st, ok, err := s.claimFrom(ctx, p, g, spec, cmdID)
		if ok {
			return st, ok, err
		}
	}
	return schemas.SandboxStatus{}, false, nil
}

// claimFrom is Claim from pool p.
func (s *Pools) claimFrom(ctx context.Context, pool *warm, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string) (schemas.SandboxStatus, bool, error) {
	shape, fit := s.shape(ctx, pool, g, spec)
	if !fit {
		return schemas.SandboxStatus{}, false, nil
	}
	// A create the pool could serve keeps it in use, and wakes the pool
	// loop to refill it (or fill it again, when it shrank while idle).
	pool.touch()
	defer s.Wake()
	poolID, ready := pool.take()
	if !ready {
		return schemas.SandboxStatus{}, false, nil
	}
	p, _, err := s.store.Sandbox(ctx, poolID)
	if err != nil || !s.fits(p, shape) || p.PoolGroup != pool.src.Group {
		if err == nil {
			pool.giveBack(poolID)
		} else {
			pool.claimed()
			s.removeLogged(ctx, poolID)
		}
		return schemas.SandboxStatus{}, false, nil
	}
	st, outcome, err := s.claimer.Claim(ctx, p, Request{Group: g, Spec: spec, CommandID: cmdID, Shape: shape})
	switch outcome {
	case GivenBack:
		pool.giveBack(poolID)
		return schemas.SandboxStatus{}, true, err
	case Failed:
		pool.claimed()
		return schemas.SandboxStatus{}, false, nil
	}
	pool.claimed()
	return st, true, err
}

// shape resolves the create of spec in group g as the create would, for
// a claim from pool p; ok is false when it cannot come from p: the
// sandbox adds tool files, the group has tool files and p is not the
// group's pool, p is the pool of another group (or of an earlier group
// of the same id), or anything does not resolve (the fresh create
// reports it).
func (s *Pools) shape(ctx context.Context, p *warm, g schemas.GroupStatus, spec schemas.SandboxSpec) (Shape, bool) {
	if len(spec.Tools) > 0 {
		return Shape{}, false
	}
	if p.src.Group == "" && len(g.Spec.Tools) > 0 {
		return Shape{}, false
	}
	if p.src.Group != "" && (p.src.Group != g.ID || !p.src.Created.Equal(g.CreatedAt)) {
		return Shape{}, false
	}
	families, err := images.ChooseFamilies(g.Spec.Families, spec.Families)
	if err != nil {
		return Shape{}, false
	}
	// As a create resolves its resources, on the host measured by a
	// recent claim: docker info takes milliseconds a claim does not have.
	// A disk is checked when the pooled sandbox is made.
	req, err := resources.Parse(resources.Merge(g.Spec.Compute, spec.Compute))
	if err != nil {
		return Shape{}, false
	}
	host, err := s.hosts.get(ctx, s.measure)
	if err != nil {
		return Shape{}, false
	}
	limits, err := resources.Resolve(req, host)
	if err != nil {
		return Shape{}, false
	}
	egressPolicy, err := s.egress.Resolve(g.Spec.Egress, spec.Egress)
	if err != nil {
		return Shape{}, false
	}
	dbs := g.Spec.DatabaseAccess
	if spec.Databases != nil {
		dbs = *spec.Databases
	}
	return Shape{Families: families, Limits: limits, Host: host, Egress: egressPolicy, Databases: dbs}, true
}

// fits reports whether pooled sandbox p can become a sandbox of shape sh:
// the same families (hence image), egress, disk, CPU set and memory
// bandwidth; and each of the CPU, memory and process limits the same, or
// set (not unlimited) when the runtime can update a running container's:
// an update can change a limit but not lift it.
func (s *Pools) fits(p schemas.SandboxStatus, sh Shape) bool {
	if !slices.Equal(p.Families, sh.Families) || p.Egress == nil || !reflect.DeepEqual(*p.Egress, sh.Egress) {
		return false
	}
	pr, r := p.Resources, sh.Limits
	if r.DiskBytes != pr.DiskBytes || r.CPUSet != pr.CPUSet || r.MemoryBandwidthBytes != pr.MemoryBandwidthBytes {
		return false
	}
	for _, l := range [][2]int64{{pr.NanoCPUs, r.NanoCPUs}, {pr.MemoryBytes, r.MemoryBytes}, {pr.PIDs, r.PIDs}} {
		if l[0] != l[1] && (!s.cfg.CanUpdate || l[1] == 0) {
			return false
		}
	}
	return true
}

// SandboxOf maps the sandbox label of a container to its sandbox: a
// claimed pooled sandbox's container names the pool id, whose record
// names the sandbox that claimed it. A pooled sandbox not claimed is "":
// its events concern no sandbox (a claim of a dead one falls back).
func (s *Pools) SandboxOf(ctx context.Context, label string) string {
	if !schemas.IsPoolID(label) {
		return label
	}
	p, _, err := s.store.Sandbox(ctx, label)
	if err != nil {
		return ""
	}
	return p.ClaimedBy
}

// hostTTL is how long a claim uses the host a claim measured before.
const hostTTL = 10 * time.Second

// hostCache keeps the measure of the engine's host for claims. It is safe
// for concurrent use.
type hostCache struct {
	mu   sync.Mutex
	host resources.Host
	at   time.Time
}

// get returns the host measured less than hostTTL ago, or measures it
// again with measure.
func (c *hostCache) get(ctx context.Context, measure func(context.Context) (resources.Host, error)) (resources.Host, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < hostTTL {
		return c.host, nil
	}
	h, err := measure(ctx)
	if err != nil {
		return h, err
	}
	c.host, c.at = h, time.Now()
	return h, nil
}
