package sandboxes

import (
	"context"
	"errors"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/cleanup"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/pool"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// The warm pools (docs/pools.md) are the pool part's (package pool): it
// decides when to fill, drain, reap and which pooled sandbox a create
// claims. poolSandboxes is its side in the sandbox lifecycle: it makes,
// removes and hands over the pooled sandboxes themselves, each created
// and started under a pool id (schemas.PoolIDPrefix) with a pool identity
// and a ledger allocation of its own, so that it counts against
// admission. A pooled executor serves only its claim subject
// (executor.AwaitClaim) until a claim (claim.go) hands it a sandbox.

// poolSandboxes makes, removes and hands over the worker's pooled
// sandboxes for the pool part.
type poolSandboxes struct{ s *Service }

var (
	_ pool.Maker   = poolSandboxes{}
	_ pool.Claimer = poolSandboxes{}
)

// Fill creates and starts one pooled sandbox made of src and returns its
// pool id. On failure nothing of it is left.
func (m poolSandboxes) Fill(ctx context.Context, src pool.Source) (_ string, err error) {
	s := m.s
	id := pool.NewID()
	families, err := images.ChooseFamilies(src.Families, nil)
	if err != nil {
		return "", err
	}
	limits, host, err := s.resolveResources(ctx, src.Compute)
	if err != nil {
		return "", err
	}
	egressPolicy, err := s.isolation.Resolve(src.Egress, nil)
	if err != nil {
		return "", err
	}
	st := schemas.SandboxStatus{
		ID:         id,
		State:      schemas.StateCreated,
		Host:       s.cfg.Host, // placement: a pool is its worker's host's
		Families:   families,
		Tools:      images.ToolModules(families, src.Tools),
		Resources:  limits,
		Egress:     &egressPolicy,
		Pooled:     true,
		PoolGroup:  src.Group,
		PoolWorker: s.cfg.Worker,
	}
	if _, err := s.store.CreateSandbox(ctx, st); err != nil {
		return "", err
	}
	undo := s.pooledResources(id, "")
	defer func() {
		if err == nil {
			return
		}
		if cerr := undo.Run(ctx); cerr != nil {
			s.log.Error("a failed pool fill left resources behind", "sandbox", id, "err", cerr)
		}
	}()
	if err := s.ledger.Admit(ctx, id, limits, host, src.Overcommit); err != nil {
		return "", err
	}
	if err := s.ids.MakePoolDir(id); err != nil {
		return "", err
	}
	if err := s.createContainer(ctx, &st, src.Tools, nil, undo); err != nil {
		return "", err
	}
	if err := s.ids.CopyToPool(id, id); err != nil {
		return "", err
	}
	rw, err := s.watchReady(id)
	if err != nil {
		return "", err
	}
	defer rw.Close()
	if err := s.rt.Start(ctx, st.Container); err != nil {
		return "", err
	}
	if _, err := s.awaitReady(ctx, st, rw); err != nil {
		return "", err
	}
	st.State = schemas.StateRunning
	if err := s.store.PutSandbox(ctx, &st); err != nil {
		return "", err
	}
	s.log.Debug("pooled sandbox ready", "sandbox", id, "pool", src.Group)
	return id, nil
}

// Remove removes a pooled sandbox that was never claimed.
func (m poolSandboxes) Remove(ctx context.Context, poolID string) error {
	return m.s.pooledResources(poolID, "").Run(ctx)
}

// Revoke revokes the identity of sandbox id.
func (m poolSandboxes) Revoke(ctx context.Context, id string) error {
	return m.s.ids.Revoke(ctx, id)
}

// pooledResources is the undo stack of pooled sandbox poolID (whose
// container is container, "" for its own name): its record, ledger
// allocation, volume, egress proxy, container, identity and credentials
// directory. A claimed sandbox's own record, identity and allocation are
// not on it.
func (s *Service) pooledResources(poolID, container string) *cleanup.Stack {
	c := &cleanup.Stack{}
	c.Push(resRecord, func(ctx context.Context) error { return s.store.DeleteSandbox(ctx, poolID) })
	c.Push(resLedger, func(ctx context.Context) error { return s.ledger.Release(ctx, poolID) })
	c.Push(resDisk, func(context.Context) error { return s.detachDisk(poolID) })
	c.Push(resVolume, func(ctx context.Context) error { return s.rt.RemoveVolume(ctx, runtime.VolumeName(poolID)) })
	c.Push(resEgress, func(context.Context) error { return s.egress.Close(poolID) })
	if container == "" {
		container = runtime.ContainerName(poolID)
	}
	c.Push(resContainer, func(ctx context.Context) error { return s.rt.Remove(ctx, container) })
	c.Push(resIdentity, func(ctx context.Context) error {
		return errors.Join(s.ids.Revoke(ctx, poolID), s.ids.RemovePoolDir(poolID))
	})
	return c
}

// PoolMaker is the side of s that makes and removes the pools' sandboxes.
func (s *Service) PoolMaker() pool.Maker { return poolSandboxes{s} }

// PoolClaimer is the side of s that hands a pooled sandbox over to a
// claim.
func (s *Service) PoolClaimer() pool.Claimer { return poolSandboxes{s} }
