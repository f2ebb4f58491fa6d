package sandboxes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/lifetime"
	"github.com/sandox/sandox/services/orchestrator/pool"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// Claim makes the sandbox of req from running pooled sandbox p, which the
// pool part took and found to fit req.Shape: it records the sandbox,
// moves p's ledger allocation to it, hands the container over and joins
// the sandbox to its group. A refusal before the hand-over (an id already
// taken, a host that is full) gives p back; a hand-over that fails
// removes p, and the create makes the sandbox afresh.
func (m poolSandboxes) Claim(ctx context.Context, p schemas.SandboxStatus, req pool.Request) (schemas.SandboxStatus, pool.Outcome, error) {
	s, g, shape := m.s, req.Group, req.Shape
	st := schemas.SandboxStatus{
		ID:          req.Spec.ID,
		GroupID:     g.ID,
		State:       schemas.StateCreated,
		Host:        s.cfg.Host, // placement: the pool is this host's
		Image:       p.Image,
		ImageReused: true,
		Container:   p.Container,
		Families:    p.Families,
		Tools:       p.Tools,
		Resources:   shape.Limits,
		Databases:   shape.Databases,
		Egress:      p.Egress,
		FromPool:    true,
		PoolID:      p.ID,
	}
	lifetime.Set(&st, req.Spec, time.Now().UTC())
	if _, err := s.store.CreateSandbox(ctx, st); err != nil {
		return schemas.SandboxStatus{}, pool.GivenBack, err
	}
	if err := m.swapAllocation(ctx, p.ID, st.ID, shape, g.Spec.Overcommit); err != nil {
		return schemas.SandboxStatus{}, pool.GivenBack, errors.Join(fmt.Errorf("sandbox %s: %w", st.ID, err), s.store.DeleteSandbox(ctx, st.ID))
	}
	if err := m.becomeClaimed(ctx, p, &st); err != nil {
		s.log.Warn("a claim from the warm pool failed; creating the sandbox afresh", "sandbox", st.ID, "pool", p.ID, "command", req.CommandID, "err", err)
		undo := s.pooledResources(p.ID, p.Container)
		undo.Push(resLedger, func(ctx context.Context) error { return s.ledger.Release(ctx, st.ID) })
		undo.Push(resIdentity, func(ctx context.Context) error { return s.ids.Revoke(ctx, st.ID) })
		undo.Push(resRecord, func(ctx context.Context) error { return s.store.DeleteSandbox(ctx, st.ID) })
		if cerr := undo.Run(ctx); cerr != nil {
			s.log.Error("a failed claim left resources behind", "sandbox", st.ID, "pool", p.ID, "err", cerr)
		}
		return schemas.SandboxStatus{}, pool.Failed, nil
	}
	if err := s.store.JoinGroup(ctx, g.ID, st.ID); err != nil {
		return st, pool.Taken, err
	}
	s.publish(schemas.Event{Kind: schemas.EventCreated, GroupID: g.ID, SandboxID: st.ID, CommandID: req.CommandID, Message: "created from the warm pool", Sandbox: &st})
	s.publish(schemas.Event{Kind: schemas.EventStarted, GroupID: g.ID, SandboxID: st.ID, CommandID: req.CommandID, Message: "running (from the warm pool)", Sandbox: &st})
	return st, pool.Taken, nil
}

// swapAllocation moves the ledger allocation of pooled sandbox poolID to
// sandbox id with the claimed limits, in one update: the claim needs no
// more room than the pool already holds, beyond what its limits add.
func (m poolSandboxes) swapAllocation(ctx context.Context, poolID, id string, shape pool.Shape, overcommit float64) error {
	return m.s.ledger.Update(ctx, func(l *resources.Ledger) error {
		l.Release(poolID)
		return l.Admit(id, shape.Limits, shape.Host, overcommit)
	})
}

// becomeClaimed turns the running pooled sandbox p into sandbox st: it
// hands the container over (handOver) while it sets the claimed limits
// (docker update, which needs no claim), then records st running and p
// claimed by it.
func (m poolSandboxes) becomeClaimed(ctx context.Context, p schemas.SandboxStatus, st *schemas.SandboxStatus) error {
	updated := make(chan error, 1)
	go func() { updated <- m.updateLimits(ctx, p, *st) }()
	ready, err := m.handOver(ctx, p, *st)
	if err = errors.Join(err, <-updated); err != nil {
		return err
	}
	if ready.Modules != nil {
		st.Tools = ready.Modules
	}
	running, err := m.s.store.UpdateSandbox(ctx, st.ID, startedAs(schemas.StateRunning, "", st.Tools))
	if err != nil {
		return err
	}
	*st = running
	_, err = m.s.store.UpdateSandbox(ctx, p.ID, func(p *schemas.SandboxStatus) error {
		p.ClaimedBy = st.ID
		return nil
	})
	return err
}

// handOver mints st's identity and writes it over the pool's credentials,
// sends the claim and, once the executor has it, revokes the pool
// identity (which drops whatever still used it) while it waits until the
// executor serves st's subjects. It returns the executor's ready answer.
func (m poolSandboxes) handOver(ctx context.Context, p, st schemas.SandboxStatus) (schemas.ExecutorReady, error) {
	s := m.s
	if err := s.ids.Mint(ctx, st.ID, st.Databases...); err != nil {
		return schemas.ExecutorReady{}, err
	}
	if err := s.ids.CopyToPool(p.ID, st.ID); err != nil {
		return schemas.ExecutorReady{}, err
	}
	data, err := json.Marshal(schemas.PoolClaim{SandboxID: st.ID, GroupID: st.GroupID, Families: st.Families})
	if err != nil {
		return schemas.ExecutorReady{}, err
	}
	if err := s.ids.WriteToPool(p.ID, schemas.ClaimFile, data); err != nil {
		return schemas.ExecutorReady{}, fmt.Errorf("claim %s: %w", p.ID, err)
	}
	rw, err := s.watchReady(st.ID)
	if err != nil {
		return schemas.ExecutorReady{}, err
	}
	defer rw.Close()
	// The executor acknowledges the claim once it has it: from then on the
	// pool identity is not needed, and is revoked while the executor
	// reconnects. The claim waits for both.
	ackCtx, cancel := context.WithTimeout(ctx, s.cfg.ReadyTimeout)
	_, err = s.nc.RequestWithContext(ackCtx, schemas.ClaimSubject(p.ID), data)
	cancel()
	if err != nil {
		return schemas.ExecutorReady{}, fmt.Errorf("claim %s: %w", p.ID, err)
	}
	revoked := make(chan error, 1)
	go func() { revoked <- s.ids.Revoke(ctx, p.ID) }()
	ready, err := s.awaitReady(ctx, st, rw)
	if rerr := <-revoked; rerr != nil {
		err = errors.Join(err, fmt.Errorf("revoke the pool identity of %s: %w", p.ID, rerr))
	}
	return ready, err
}

// updateLimits gives the claimed container st's CPU, memory and process
// limits when they differ from the pool's.
func (m poolSandboxes) updateLimits(ctx context.Context, p, st schemas.SandboxStatus) error {
	pr, r := p.Resources, st.Resources
	if r.NanoCPUs == pr.NanoCPUs && r.MemoryBytes == pr.MemoryBytes && r.PIDs == pr.PIDs {
		return nil
	}
	if m.s.updater == nil {
		return fmt.Errorf("sandbox %s: the runtime cannot change a container's limits", st.ID)
	}
	return m.s.updater.Update(ctx, st.Container, runtime.ResourceLimits{NanoCPUs: r.NanoCPUs, MemoryBytes: r.MemoryBytes, PIDs: r.PIDs})
}

// removeClaimed removes what sandbox st, when it came from the pool, holds
// under its pool id: the pool's record, volume, egress proxy and
// credentials directory. Others are no change.
func (s *Service) removeClaimed(ctx context.Context, st schemas.SandboxStatus) error {
	if st.PoolID == "" {
		return nil
	}
	return s.pooledResources(st.PoolID, st.Container).Run(ctx)
}
