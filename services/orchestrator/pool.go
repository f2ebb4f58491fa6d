package orchestrator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// The warm pools (docs/pools.md): each worker keeps a pool of the
// default shape (Config.PoolSize sandboxes: default families, no tool
// files, default egress, Config.PoolCompute) and one per group whose spec
// asks for one (GroupSpec.Pool: the group's tool files, families, compute
// and egress). Pooled sandboxes are created and started under pool ids
// (schemas.PoolIDPrefix), each with a pool identity and a ledger
// allocation of its own, so that they count against admission. A pooled
// executor serves only its claim subject (executor.AwaitClaim). A
// create_sandbox whose spec fits claims one (claim.go), from its group's
// pool first, then from the default one; the pools refill in the
// background and empty after their idle time without a create.

// poolTick is how often the pool loop checks the pools without a kick.
const poolTick = time.Second

// The labels of a pooled sandbox's container and volume, beside the
// sandbox label (its pool id): the worker that keeps it and, for a
// group's pool, the group.
const (
	LabelPoolWorker = "dev.sandox.pool-worker"
	LabelPoolGroup  = "dev.sandox.pool-group"
)

// poolSource is what the members of a pool are made of: the inputs of a
// create, as a group spec gives them.
type poolSource struct {
	// group is the group whose pool it is; "" is the default pool.
	group string
	// created is when the group was created, so that a pool never serves
	// a later group of the same id.
	created    time.Time
	families   []string
	tools      []schemas.ToolFile
	compute    schemas.ComputeResources
	egress     *schemas.Egress
	overcommit float64
}

// warmPool is one pool of ready sandboxes. It is safe for concurrent use.
type warmPool struct {
	src  poolSource
	size int
	// idle empties the pool after that long without a create; 0 never.
	idle time.Duration

	mu sync.Mutex
	// ready lists the pool ids ready to be claimed, oldest first.
	ready []string
	// claiming counts the pool ids taken by claims not yet done: they
	// still count in the pool's size, so that the pool loop does not fill
	// in their place before the claim took or gave back each one.
	claiming int
	// lastUse is when a create last came.
	lastUse time.Time
}

func newWarmPool(src poolSource, size int, idle time.Duration) *warmPool {
	return &warmPool{src: src, size: size, idle: idle, lastUse: time.Now()}
}

// take removes and returns the oldest ready pool id and marks the pool in
// use; ok is false when none is ready. The caller then calls giveBack or
// claimed with the id.
func (p *warmPool) take() (id string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastUse = time.Now()
	if len(p.ready) == 0 {
		return "", false
	}
	id, p.ready = p.ready[0], p.ready[1:]
	p.claiming++
	return id, true
}

// giveBack makes a pool id that take returned ready again.
func (p *warmPool) giveBack(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claiming--
	p.ready = append(p.ready, id)
}

// claimed ends the claim of a pool id that take returned: it left the
// pool (claimed, or removed by a claim that failed).
func (p *warmPool) claimed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claiming--
}

// put makes pool id ready to be claimed (again).
func (p *warmPool) put(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ready = append(p.ready, id)
}

// drop removes and returns the newest ready pool id.
func (p *warmPool) drop() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ready) == 0 {
		return "", false
	}
	id := p.ready[len(p.ready)-1]
	p.ready = p.ready[:len(p.ready)-1]
	return id, true
}

// count returns how many sandboxes are ready.
func (p *warmPool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready)
}

// held returns how many sandboxes the pool holds: ready or being claimed.
func (p *warmPool) held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready) + p.claiming
}

// target is how many sandboxes the pool should hold now: its size, or
// none once its idle time has passed without a create.
func (p *warmPool) target() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle > 0 && time.Since(p.lastUse) > p.idle {
		return 0
	}
	return p.size
}

// poolSet is a worker's pools, keyed by group id ("" for the default
// pool). It is safe for concurrent use.
type poolSet struct {
	mu    sync.Mutex
	pools map[string]*warmPool
	// ended remembers, per group id, the creation time of a group whose
	// pool was drained by end_group, so that the pool loop does not fill
	// it again while the group's record is still there.
	ended map[string]time.Time
	// kick wakes the pool loop.
	kick chan struct{}
	// hosts keeps the engine's host for claims.
	hosts hostCache
}

func newPoolSet() *poolSet {
	return &poolSet{pools: map[string]*warmPool{}, ended: map[string]time.Time{}, kick: make(chan struct{}, 1)}
}

// wake asks the pool loop to check the pools.
func (s *poolSet) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// get returns the pool of key, or nil.
func (s *poolSet) get(key string) *warmPool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pools[key]
}

// set makes p the pool of key and returns the pool it replaces, or nil.
func (s *poolSet) set(key string, p *warmPool) *warmPool {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.pools[key]
	s.pools[key] = p
	return old
}

// remove forgets the pool of key and returns it, or nil.
func (s *poolSet) remove(key string) *warmPool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pools[key]
	delete(s.pools, key)
	return p
}

// all returns every pool, the default one first, then by group id.
func (s *poolSet) all() []*warmPool {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := slices.Sorted(maps.Keys(s.pools))
	out := make([]*warmPool, 0, len(keys))
	for _, k := range keys {
		out = append(out, s.pools[k])
	}
	return out
}

// add makes pool id ready in p, unless p is no longer one of the set's
// pools (its group ended while the sandbox was made): ok is then false.
func (s *poolSet) add(p *warmPool, id string) (ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pools[p.src.group] != p {
		return false
	}
	p.put(id)
	return true
}

// runPool keeps the pools at their targets until ctx is done, then
// removes the sandboxes still in them. It answers on the worker's pool
// subject meanwhile, so that other workers know its pooled sandboxes are
// kept. A fill that fails (the host is full, the image cannot be built)
// is logged and tried again at the next tick.
func (w *Worker) runPool(ctx context.Context) {
	alive, err := w.nc.Subscribe(schemas.PoolWorkerSubject(w.cfg.Worker), func(m *nats.Msg) { _ = m.Respond(nil) })
	if err != nil {
		w.log.Error("the warm pools are off: answer on the pool subject", "err", err)
		return
	}
	defer func() { _ = alive.Unsubscribe() }()
	defer w.drainPools(context.WithoutCancel(ctx))
	groups, err := w.watchGroups(ctx)
	if err != nil {
		w.log.Error("the pools of groups are off: watch the groups", "err", err)
	} else {
		watcher := groups
		defer func() { _ = watcher.Stop() }()
	}
	tick := time.NewTicker(poolTick)
	defer tick.Stop()
	reap := time.NewTicker(poolReapInterval)
	defer reap.Stop()
	for {
		for _, p := range w.pools.all() {
			w.resizePool(ctx, p)
		}
		select {
		case <-ctx.Done():
			return
		case entry, ok := <-updates(groups):
			if !ok {
				w.log.Warn("the watch of the groups ended; the pools of groups keep their last state")
				groups = nil
			} else if entry != nil {
				w.groupChanged(ctx, entry)
			}
		case <-w.pools.kick:
		case <-tick.C:
		case <-reap.C:
			w.reapPools(ctx, false)
		}
	}
}

// updates is the channel of watcher's entries, or nil (never ready)
// without a watcher.
func updates(watcher jetstream.KeyWatcher) <-chan jetstream.KeyValueEntry {
	if watcher == nil {
		return nil
	}
	return watcher.Updates()
}

// resizePool fills p up to its target, one sandbox at a time, or removes
// what is above it.
func (w *Worker) resizePool(ctx context.Context, p *warmPool) {
	target := p.target()
	for ctx.Err() == nil && p.held() < target {
		id, err := w.fillPool(ctx, p.src)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Warn("fill the warm pool", "pool", p.src.group, "err", err)
			}
			return
		}
		if !w.pools.add(p, id) {
			w.removePooledLogged(ctx, id)
			return
		}
	}
	for p.held() > target {
		id, ok := p.drop()
		if !ok {
			return
		}
		w.removePooledLogged(ctx, id)
	}
}

// drainPools removes every sandbox still in the worker's pools.
func (w *Worker) drainPools(ctx context.Context) {
	for _, p := range w.pools.all() {
		w.drainPool(ctx, p)
	}
}

// drainPool removes every sandbox still in p.
func (w *Worker) drainPool(ctx context.Context, p *warmPool) {
	for {
		id, ok := p.drop()
		if !ok {
			return
		}
		w.removePooledLogged(ctx, id)
	}
}

// removePooledLogged removes a pooled sandbox that was never claimed and
// logs a failure.
func (w *Worker) removePooledLogged(ctx context.Context, id string) {
	if err := w.removePooled(ctx, id); err != nil {
		w.log.Warn("remove a pooled sandbox", "sandbox", id, "err", err)
	}
}

// newPoolID returns a fresh pool id.
func newPoolID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return schemas.PoolIDPrefix + hex.EncodeToString(b)
}

// poolCredsDir is the host directory bound at the directory of
// SandboxCredsPath in a pooled sandbox: a claim writes the claimed
// sandbox's credentials there over the pool's.
func (w *Worker) poolCredsDir(poolID string) string {
	return filepath.Join(w.cfg.CredsDir, poolID+".d")
}

// fillPool creates and starts one pooled sandbox made of src and returns
// its pool id. On failure nothing of it is left.
func (w *Worker) fillPool(ctx context.Context, src poolSource) (_ string, err error) {
	id := newPoolID()
	families, err := chooseFamilies(src.families, nil)
	if err != nil {
		return "", err
	}
	limits, host, err := w.resolveResources(ctx, src.compute)
	if err != nil {
		return "", err
	}
	egressPolicy, err := w.resolveEgress(src.egress, nil)
	if err != nil {
		return "", err
	}
	st := schemas.SandboxStatus{
		ID:         id,
		State:      schemas.StateCreated,
		Host:       w.hostName, // placement: a pool is its worker's host's
		Families:   families,
		Tools:      toolModules(families, src.tools),
		Resources:  limits,
		Egress:     &egressPolicy,
		Pooled:     true,
		PoolGroup:  src.group,
		PoolWorker: w.cfg.Worker,
	}
	if _, err := w.store.createSandbox(ctx, st); err != nil {
		return "", err
	}
	undo := w.pooledResources(id, "")
	defer func() {
		if err == nil {
			return
		}
		if cerr := undo.run(ctx); cerr != nil {
			w.log.Error("a failed pool fill left resources behind", "sandbox", id, "err", cerr)
		}
	}()
	if err := w.admit(ctx, id, limits, host, src.overcommit); err != nil {
		return "", err
	}
	if w.cfg.CredsDir != "" {
		if err := os.MkdirAll(w.poolCredsDir(id), 0o700); err != nil {
			return "", fmt.Errorf("credentials of pooled sandbox %s: %w", id, err)
		}
		if err := os.Chown(w.poolCredsDir(id), sandboxUID, sandboxUID); err != nil {
			return "", fmt.Errorf("credentials of pooled sandbox %s: %w", id, err)
		}
	}
	if err := w.createContainer(ctx, &st, src.tools, undo); err != nil {
		return "", err
	}
	if err := w.copyCreds(id, id); err != nil {
		return "", err
	}
	rw, err := w.watchReady(id)
	if err != nil {
		return "", err
	}
	defer rw.Close()
	if err := w.rt.Start(ctx, st.Container); err != nil {
		return "", err
	}
	if _, err := w.awaitReady(ctx, st, rw); err != nil {
		return "", err
	}
	st.State = schemas.StateRunning
	if err := w.store.putSandbox(ctx, &st); err != nil {
		return "", err
	}
	w.log.Debug("pooled sandbox ready", "sandbox", id, "pool", src.group)
	return id, nil
}

// copyCreds writes the credentials of sandbox id into the credentials
// directory of pooled sandbox poolID.
func (w *Worker) copyCreds(poolID, id string) error {
	if w.cfg.CredsDir == "" {
		return nil
	}
	creds, err := os.ReadFile(w.credsFile(id))
	if err == nil {
		err = writeCreds(filepath.Join(w.poolCredsDir(poolID), filepath.Base(SandboxCredsPath)), creds)
	}
	if err != nil {
		return fmt.Errorf("credentials of pooled sandbox %s: %w", poolID, err)
	}
	return nil
}

// pooledResources is the undo stack of pooled sandbox poolID (claimed by
// sandbox claimedBy, or ""): its record, ledger allocation, volume,
// egress proxy, container, identity and credentials directory. The
// claimed sandbox's own record, identity and allocation are not on it.
func (w *Worker) pooledResources(poolID, container string) *cleanup {
	c := &cleanup{}
	c.push(resRecord, func(ctx context.Context) error { return w.store.deleteSandbox(ctx, poolID) })
	c.push(resLedger, func(ctx context.Context) error { return w.release(ctx, poolID) })
	c.push(resDisk, func(context.Context) error { return w.detachDisk(poolID) })
	c.push(resVolume, func(ctx context.Context) error { return w.rt.RemoveVolume(ctx, VolumeName(poolID)) })
	c.push(resEgress, func(context.Context) error { return w.egress.Close(poolID) })
	if container == "" {
		container = ContainerName(poolID)
	}
	c.push(resContainer, func(ctx context.Context) error { return w.rt.Remove(ctx, container) })
	c.push(resIdentity, func(ctx context.Context) error {
		err := w.revokeIdentity(ctx, poolID)
		if w.cfg.CredsDir != "" {
			err = errors.Join(err, os.RemoveAll(w.poolCredsDir(poolID)))
		}
		return err
	})
	return c
}

// removePooled removes a pooled sandbox that was never claimed.
func (w *Worker) removePooled(ctx context.Context, poolID string) error {
	return w.pooledResources(poolID, "").run(ctx)
}

// poolLabels adds, to the labels l of pooled sandbox st's container and
// volume, the worker that keeps it and the group whose pool holds it.
func poolLabels(l map[string]string, st *schemas.SandboxStatus) {
	if !st.Pooled {
		return
	}
	l[LabelPoolWorker] = st.PoolWorker
	if st.PoolGroup != "" {
		l[LabelPoolGroup] = st.PoolGroup
	}
}
