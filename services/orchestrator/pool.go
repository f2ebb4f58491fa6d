package orchestrator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
)

// The warm pool (docs/pools.md): each worker keeps Config.PoolSize
// sandboxes of the default shape (default families, no tool files,
// default egress, Config.PoolCompute) created and started under pool ids
// (schemas.PoolIDPrefix), each with a pool identity and a ledger
// allocation of its own, so that they count against admission. A pooled
// executor serves only its claim subject (executor.AwaitClaim). A
// create_sandbox whose spec fits the shape claims one (claim.go); the
// pool refills in the background and empties after Config.PoolIdle
// without a create.

// poolTick is how often the pool loop checks its size without a kick.
const poolTick = time.Second

// warmPool is the worker's pool of ready sandboxes.
type warmPool struct {
	mu sync.Mutex
	// ready lists the pool ids ready to be claimed, oldest first.
	ready []string
	// lastUse is when a create last came.
	lastUse time.Time
	// kick wakes the pool loop.
	kick chan struct{}
}

func newWarmPool() *warmPool {
	return &warmPool{lastUse: time.Now(), kick: make(chan struct{}, 1)}
}

// wake asks the pool loop to check its size.
func (p *warmPool) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// take removes and returns the oldest ready pool id and marks the pool in
// use; ok is false when none is ready.
func (p *warmPool) take() (id string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastUse = time.Now()
	if len(p.ready) == 0 {
		return "", false
	}
	id, p.ready = p.ready[0], p.ready[1:]
	return id, true
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

// size returns how many sandboxes are ready.
func (p *warmPool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready)
}

// target is how many sandboxes the pool should hold now: size, or none
// once idle has passed without a create (idle 0 never empties it).
func (p *warmPool) target(size int, idle time.Duration) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if idle > 0 && time.Since(p.lastUse) > idle {
		return 0
	}
	return size
}

// runPool keeps the pool at its target until ctx is done, then removes
// the sandboxes still in it. A fill that fails (the host is full, the
// image cannot be built) is logged and tried again at the next tick.
func (w *Worker) runPool(ctx context.Context) {
	defer w.drainPool(context.WithoutCancel(ctx))
	tick := time.NewTicker(poolTick)
	defer tick.Stop()
	for {
		w.resizePool(ctx)
		select {
		case <-ctx.Done():
			return
		case <-w.pool.kick:
		case <-tick.C:
		}
	}
}

// resizePool fills the pool up to its target, one sandbox at a time, or
// removes what is above it.
func (w *Worker) resizePool(ctx context.Context) {
	target := w.pool.target(w.cfg.PoolSize, w.cfg.PoolIdle)
	for ctx.Err() == nil && w.pool.size() < target {
		id, err := w.fillPool(ctx)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Warn("fill the warm pool", "err", err)
			}
			return
		}
		w.pool.put(id)
	}
	for w.pool.size() > target {
		id, ok := w.pool.drop()
		if !ok {
			return
		}
		if err := w.removePooled(ctx, id); err != nil {
			w.log.Warn("shrink the warm pool", "sandbox", id, "err", err)
		}
	}
}

// drainPool removes every sandbox still in the pool.
func (w *Worker) drainPool(ctx context.Context) {
	for {
		id, ok := w.pool.drop()
		if !ok {
			return
		}
		if err := w.removePooled(ctx, id); err != nil {
			w.log.Warn("remove a pooled sandbox", "sandbox", id, "err", err)
		}
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

// fillPool creates and starts one pooled sandbox of the default shape and
// returns its pool id. On failure nothing of it is left.
func (w *Worker) fillPool(ctx context.Context) (_ string, err error) {
	id := newPoolID()
	families, err := chooseFamilies(nil, nil)
	if err != nil {
		return "", err
	}
	limits, host, err := w.resolveResources(ctx, w.cfg.PoolCompute)
	if err != nil {
		return "", err
	}
	egressPolicy, err := w.resolveEgress(nil, nil)
	if err != nil {
		return "", err
	}
	st := schemas.SandboxStatus{
		ID:        id,
		State:     schemas.StateCreated,
		Host:      w.hostName, // placement: a pool is its worker's host's
		Families:  families,
		Tools:     toolModules(families, nil),
		Resources: limits,
		Egress:    &egressPolicy,
		Pooled:    true,
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
	if err := w.admit(ctx, id, limits, host, 0); err != nil {
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
	if err := w.createContainer(ctx, &st, nil, undo); err != nil {
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
	w.log.Debug("pooled sandbox ready", "sandbox", id)
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
