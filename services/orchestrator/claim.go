package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// poolShape is what a create asks that a pooled sandbox can be.
type poolShape struct {
	families []string
	limits   schemas.ResolvedResources
	host     resources.Host
	egress   schemas.Egress
	dbs      schemas.DatabaseAccess
}

// claimShape resolves the create of spec in group g as doCreateSandbox
// would, for a claim from pool p; ok is false when it cannot come from p:
// the sandbox adds tool files, the group has tool files and p is not the
// group's pool, p is the pool of another group (or of an earlier group of
// the same id), or anything does not resolve (the fresh create reports
// it).
func (w *Worker) claimShape(ctx context.Context, p *warmPool, g schemas.GroupStatus, spec schemas.SandboxSpec) (poolShape, bool) {
	if len(spec.Tools) > 0 {
		return poolShape{}, false
	}
	if p.src.group == "" && len(g.Spec.Tools) > 0 {
		return poolShape{}, false
	}
	if p.src.group != "" && (p.src.group != g.ID || !p.src.created.Equal(g.CreatedAt)) {
		return poolShape{}, false
	}
	families, err := images.ChooseFamilies(g.Spec.Families, spec.Families)
	if err != nil {
		return poolShape{}, false
	}
	// As resolveResources, on the host measured by a recent claim: docker
	// info takes milliseconds a claim does not have. A disk is checked
	// when the pooled sandbox is made.
	req, err := resources.Parse(resources.Merge(g.Spec.Compute, spec.Compute))
	if err != nil {
		return poolShape{}, false
	}
	host, err := w.pools.hosts.get(ctx, w.host)
	if err != nil {
		return poolShape{}, false
	}
	limits, err := resources.Resolve(req, host)
	if err != nil {
		return poolShape{}, false
	}
	egressPolicy, err := w.isolation.Resolve(g.Spec.Egress, spec.Egress)
	if err != nil {
		return poolShape{}, false
	}
	dbs := g.Spec.DatabaseAccess
	if spec.Databases != nil {
		dbs = *spec.Databases
	}
	return poolShape{families: families, limits: limits, host: host, egress: egressPolicy, dbs: dbs}, true
}

// fits reports whether pooled sandbox p can become a sandbox of shape s:
// the same families (hence image), egress, disk, CPU set and memory
// bandwidth; and each of the CPU, memory and process limits the same, or
// set (not unlimited) when the runtime can update a running container's:
// an update can change a limit but not lift it.
func (w *Worker) fits(p schemas.SandboxStatus, s poolShape) bool {
	if !slices.Equal(p.Families, s.families) || p.Egress == nil || !reflect.DeepEqual(*p.Egress, s.egress) {
		return false
	}
	pr, r := p.Resources, s.limits
	if r.DiskBytes != pr.DiskBytes || r.CPUSet != pr.CPUSet || r.MemoryBandwidthBytes != pr.MemoryBandwidthBytes {
		return false
	}
	canUpdate := w.updater != nil
	for _, l := range [][2]int64{{pr.NanoCPUs, r.NanoCPUs}, {pr.MemoryBytes, r.MemoryBytes}, {pr.PIDs, r.PIDs}} {
		if l[0] != l[1] && (!canUpdate || l[1] == 0) {
			return false
		}
	}
	return true
}

// claimPooled makes sandbox spec.ID of group g from a pooled sandbox when
// one is ready and fits: from the group's own pool first, then from the
// default pool. ok false means create it fresh: no pool has one that
// fits, or the claim failed (the pooled sandbox is then removed). ok true
// with an error is the create's answer (an id already taken, a host that
// is full). Call it with the group's and the sandbox's locks held.
func (w *Worker) claimPooled(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string) (schemas.SandboxStatus, bool, error) {
	if schemas.ValidateID("sandbox", spec.ID) != nil {
		return schemas.SandboxStatus{}, false, nil
	}
	for _, key := range []string{g.ID, ""} {
		p := w.pools.get(key)
		if p == nil {
			continue
		}
		st, ok, err := w.claimFrom(ctx, p, g, spec, cmdID)
		if ok {
			return st, ok, err
		}
	}
	return schemas.SandboxStatus{}, false, nil
}

// claimFrom is claimPooled from pool p.
func (w *Worker) claimFrom(ctx context.Context, pool *warmPool, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string) (_ schemas.SandboxStatus, ok bool, err error) {
	shape, fit := w.claimShape(ctx, pool, g, spec)
	if !fit {
		return schemas.SandboxStatus{}, false, nil
	}
	// A create the pool could serve keeps it in use, and wakes the pool
	// loop to refill it (or fill it again, when it shrank while idle).
	pool.touch()
	defer w.pools.wake()
	poolID, ready := pool.take()
	if !ready {
		return schemas.SandboxStatus{}, false, nil
	}
	p, _, err := w.store.Sandbox(ctx, poolID)
	if err != nil || !w.fits(p, shape) || p.PoolGroup != pool.src.group {
		if err == nil {
			pool.giveBack(poolID)
		} else {
			pool.claimed()
			w.removePooledLogged(ctx, poolID)
		}
		return schemas.SandboxStatus{}, false, nil
	}
	// From here on the pool id leaves the pool, unless it is given back.
	givenBack := false
	defer func() {
		if !givenBack {
			pool.claimed()
		}
	}()
	st := schemas.SandboxStatus{
		ID:          spec.ID,
		GroupID:     g.ID,
		State:       schemas.StateCreated,
		Host:        w.hostName, // placement: the pool is this host's
		Image:       p.Image,
		ImageReused: true,
		Container:   p.Container,
		Families:    p.Families,
		Tools:       p.Tools,
		Resources:   shape.limits,
		Databases:   shape.dbs,
		Egress:      p.Egress,
		FromPool:    true,
		PoolID:      poolID,
	}
	setLifetime(&st, spec, time.Now().UTC())
	if _, err := w.store.CreateSandbox(ctx, st); err != nil {
		pool.giveBack(poolID)
		givenBack = true
		return schemas.SandboxStatus{}, true, err
	}
	if err := w.swapAllocation(ctx, poolID, st.ID, shape, g.Spec.Overcommit); err != nil {
		pool.giveBack(poolID)
		givenBack = true
		return schemas.SandboxStatus{}, true, errors.Join(fmt.Errorf("sandbox %s: %w", st.ID, err), w.store.DeleteSandbox(ctx, st.ID))
	}
	if err := w.becomeClaimed(ctx, p, &st); err != nil {
		w.log.Warn("a claim from the warm pool failed; creating the sandbox afresh", "sandbox", st.ID, "pool", poolID, "command", cmdID, "err", err)
		undo := w.pooledResources(poolID, p.Container)
		undo.Push(resLedger, func(ctx context.Context) error { return w.release(ctx, st.ID) })
		undo.Push(resIdentity, func(ctx context.Context) error { return w.revokeIdentity(ctx, st.ID) })
		undo.Push(resRecord, func(ctx context.Context) error { return w.store.DeleteSandbox(ctx, st.ID) })
		if cerr := undo.Run(ctx); cerr != nil {
			w.log.Error("a failed claim left resources behind", "sandbox", st.ID, "pool", poolID, "err", cerr)
		}
		return schemas.SandboxStatus{}, false, nil
	}
	if err := w.store.JoinGroup(ctx, g.ID, st.ID); err != nil {
		return st, true, err
	}
	w.publishEvent(schemas.Event{Kind: schemas.EventCreated, GroupID: g.ID, SandboxID: st.ID, CommandID: cmdID, Message: "created from the warm pool", Sandbox: &st})
	w.publishEvent(schemas.Event{Kind: schemas.EventStarted, GroupID: g.ID, SandboxID: st.ID, CommandID: cmdID, Message: "running (from the warm pool)", Sandbox: &st})
	return st, true, nil
}

// swapAllocation moves the ledger allocation of pooled sandbox poolID to
// sandbox id with the claimed limits, in one update: the claim needs no
// more room than the pool already holds, beyond what its limits add.
func (w *Worker) swapAllocation(ctx context.Context, poolID, id string, s poolShape, overcommit float64) error {
	key, err := w.engineKey(ctx)
	if err != nil {
		return err
	}
	return w.store.UpdateLedger(ctx, key, func(l *resources.Ledger) error {
		l.Release(poolID)
		return l.Admit(id, s.limits, s.host, overcommit)
	})
}

// becomeClaimed turns the running pooled sandbox p into sandbox st: it
// hands the container over (handOver) while it sets the claimed limits
// (docker update, which needs no claim), then records st running and p
// claimed by it.
func (w *Worker) becomeClaimed(ctx context.Context, p schemas.SandboxStatus, st *schemas.SandboxStatus) error {
	updated := make(chan error, 1)
	go func() { updated <- w.updateLimits(ctx, p, *st) }()
	ready, err := w.handOver(ctx, p, *st)
	if err = errors.Join(err, <-updated); err != nil {
		return err
	}
	if ready.Modules != nil {
		st.Tools = ready.Modules
	}
	running, err := w.store.UpdateSandbox(ctx, st.ID, startedAs(schemas.StateRunning, "", st.Tools))
	if err != nil {
		return err
	}
	*st = running
	_, err = w.store.UpdateSandbox(ctx, p.ID, func(p *schemas.SandboxStatus) error {
		p.ClaimedBy = st.ID
		return nil
	})
	return err
}

// handOver mints st's identity and writes it over the pool's credentials,
// sends the claim and, once the executor has it, revokes the pool
// identity (which drops whatever still used it) while it waits until the
// executor serves st's subjects. It returns the executor's ready answer.
func (w *Worker) handOver(ctx context.Context, p, st schemas.SandboxStatus) (schemas.ExecutorReady, error) {
	if err := w.mintIdentity(ctx, st.ID, st.Databases...); err != nil {
		return schemas.ExecutorReady{}, err
	}
	if err := w.copyCreds(p.ID, st.ID); err != nil {
		return schemas.ExecutorReady{}, err
	}
	data, err := json.Marshal(schemas.PoolClaim{SandboxID: st.ID, GroupID: st.GroupID, Families: st.Families})
	if err != nil {
		return schemas.ExecutorReady{}, err
	}
	if w.cfg.CredsDir != "" {
		if err := writeCreds(filepath.Join(w.poolCredsDir(p.ID), schemas.ClaimFile), data); err != nil {
			return schemas.ExecutorReady{}, fmt.Errorf("claim %s: %w", p.ID, err)
		}
	}
	rw, err := w.watchReady(st.ID)
	if err != nil {
		return schemas.ExecutorReady{}, err
	}
	defer rw.Close()
	// The executor acknowledges the claim once it has it: from then on the
	// pool identity is not needed, and is revoked while the executor
	// reconnects. The claim waits for both.
	ackCtx, cancel := context.WithTimeout(ctx, w.cfg.ReadyTimeout)
	_, err = w.nc.RequestWithContext(ackCtx, schemas.ClaimSubject(p.ID), data)
	cancel()
	if err != nil {
		return schemas.ExecutorReady{}, fmt.Errorf("claim %s: %w", p.ID, err)
	}
	revoked := make(chan error, 1)
	go func() { revoked <- w.revokeIdentity(ctx, p.ID) }()
	ready, err := w.awaitReady(ctx, st, rw)
	if rerr := <-revoked; rerr != nil {
		err = errors.Join(err, fmt.Errorf("revoke the pool identity of %s: %w", p.ID, rerr))
	}
	return ready, err
}

// updateLimits gives the claimed container st's CPU, memory and process
// limits when they differ from the pool's.
func (w *Worker) updateLimits(ctx context.Context, p, st schemas.SandboxStatus) error {
	pr, r := p.Resources, st.Resources
	if r.NanoCPUs == pr.NanoCPUs && r.MemoryBytes == pr.MemoryBytes && r.PIDs == pr.PIDs {
		return nil
	}
	if w.updater == nil {
		return fmt.Errorf("sandbox %s: the runtime cannot change a container's limits", st.ID)
	}
	return w.updater.Update(ctx, st.Container, runtime.ResourceLimits{NanoCPUs: r.NanoCPUs, MemoryBytes: r.MemoryBytes, PIDs: r.PIDs})
}

// removeClaimed removes what sandbox st, when it came from the pool, holds
// under its pool id: the pool's record, volume, egress proxy and
// credentials directory. Others are no change.
func (w *Worker) removeClaimed(ctx context.Context, st schemas.SandboxStatus) error {
	if st.PoolID == "" {
		return nil
	}
	return w.pooledResources(st.PoolID, st.Container).Run(ctx)
}

// sandboxOf maps the sandbox label of a container to its sandbox: a
// claimed pooled sandbox's container names the pool id, whose record
// names the sandbox that claimed it. A pooled sandbox not claimed is "":
// its events concern no sandbox (a claim of a dead one falls back).
func (w *Worker) sandboxOf(ctx context.Context, label string) string {
	if !schemas.IsPoolID(label) {
		return label
	}
	p, _, err := w.store.Sandbox(ctx, label)
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
