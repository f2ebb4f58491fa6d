package orchestrator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/cleanup"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/runtime"
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
	var groups jetstream.KeyWatcher // nil until watching: see rewatch
	defer func() {
		if groups != nil {
			_ = groups.Stop()
		}
	}()
	tick := time.NewTicker(poolTick)
	defer tick.Stop()
	reap := time.NewTicker(poolReapInterval)
	defer reap.Stop()
	for {
		groups = w.rewatch(ctx, groups)
		for _, p := range w.pools.all() {
			w.resizePool(ctx, p)
		}
		select {
		case <-ctx.Done():
			return
		case entry, ok := <-updates(groups):
			if !ok {
				w.log.Warn("the watch of the groups ended; watching again")
				_ = groups.Stop()
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

// rewatch returns watcher, or, when it is nil, a new watch of the groups
// (nil again when that fails: the next tick tries again). A new watch
// starts with every group, so the pools of groups catch up.
func (w *Worker) rewatch(ctx context.Context, watcher jetstream.KeyWatcher) jetstream.KeyWatcher {
	if watcher != nil || ctx.Err() != nil {
		return watcher
	}
	watcher, err := w.watchGroups(ctx)
	if err != nil {
		w.log.Warn("watch the groups for their pools", "err", err)
		return nil
	}
	return watcher
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
	families, err := images.ChooseFamilies(src.families, nil)
	if err != nil {
		return "", err
	}
	limits, host, err := w.resolveResources(ctx, src.compute)
	if err != nil {
		return "", err
	}
	egressPolicy, err := w.isolation.Resolve(src.egress, nil)
	if err != nil {
		return "", err
	}
	st := schemas.SandboxStatus{
		ID:         id,
		State:      schemas.StateCreated,
		Host:       w.hostName, // placement: a pool is its worker's host's
		Families:   families,
		Tools:      images.ToolModules(families, src.tools),
		Resources:  limits,
		Egress:     &egressPolicy,
		Pooled:     true,
		PoolGroup:  src.group,
		PoolWorker: w.cfg.Worker,
	}
	if _, err := w.store.CreateSandbox(ctx, st); err != nil {
		return "", err
	}
	undo := w.pooledResources(id, "")
	defer func() {
		if err == nil {
			return
		}
		if cerr := undo.Run(ctx); cerr != nil {
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
	if err := w.store.PutSandbox(ctx, &st); err != nil {
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
func (w *Worker) pooledResources(poolID, container string) *cleanup.Stack {
	c := &cleanup.Stack{}
	c.Push(resRecord, func(ctx context.Context) error { return w.store.DeleteSandbox(ctx, poolID) })
	c.Push(resLedger, func(ctx context.Context) error { return w.release(ctx, poolID) })
	c.Push(resDisk, func(context.Context) error { return w.detachDisk(poolID) })
	c.Push(resVolume, func(ctx context.Context) error { return w.rt.RemoveVolume(ctx, runtime.VolumeName(poolID)) })
	c.Push(resEgress, func(context.Context) error { return w.egress.Close(poolID) })
	if container == "" {
		container = runtime.ContainerName(poolID)
	}
	c.Push(resContainer, func(ctx context.Context) error { return w.rt.Remove(ctx, container) })
	c.Push(resIdentity, func(ctx context.Context) error {
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
	return w.pooledResources(poolID, "").Run(ctx)
}

// poolLabels adds, to the labels l of pooled sandbox st's container and
// volume, the worker that keeps it and the group whose pool holds it.
func poolLabels(l map[string]string, st *schemas.SandboxStatus) {
	if !st.Pooled {
		return
	}
	l[runtime.LabelPoolWorker] = st.PoolWorker
	if st.PoolGroup != "" {
		l[runtime.LabelPoolGroup] = st.PoolGroup
	}
}
