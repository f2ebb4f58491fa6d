package groups

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/locks"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// EndGroup ends every sandbox of the group on every host, removes anything
// left with the group's label on every live host, and forgets the group.
// Every other live host runs its part (EndGroupPart, through its host
// subject) while this worker runs its own; the sandboxes of hosts that are
// not live are forgotten (their host removes what is left when it
// returns).
func (s *Service) EndGroup(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	unlock := s.locks.Lock(locks.Group(cmd.GroupID))
	defer unlock()
	g, _, err := s.store.Group(ctx, cmd.GroupID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	hosts, err := s.store.LiveHosts(ctx, s.cfg.HostLostAfter)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	var (
		mu    sync.Mutex
		errs  []error
		ended []schemas.SandboxStatus
		parts sync.WaitGroup
	)
	gather := func(res schemas.CommandResult, err error) {
		mu.Lock()
		defer mu.Unlock()
		ended = append(ended, res.Sandboxes...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	for name := range hosts {
		if name == s.cfg.Host {
			continue
		}
		parts.Go(func() {
			res, err := s.delegator.Delegate(ctx, name, schemas.Command{ID: cmd.ID + "-end-" + name, Kind: schemas.EndGroup, GroupID: g.ID})
			gather(res, resultError(res, err))
		})
	}
	here, err := s.endGroupHere(ctx, g, cmd.ID, true)
	gather(schemas.CommandResult{Sandboxes: here}, err)
	parts.Wait()
	for _, id := range g.Sandboxes {
		st, _, err := s.store.Sandbox(ctx, id)
		if err != nil || s.hosts.Here(st.Host) || s.hosts.Live(ctx, st.Host) {
			continue
		}
		unlockSandbox := s.locks.Lock(locks.Sandbox(id))
		st, err = s.sandboxes.Forget(ctx, id, cmd.ID)
		unlockSandbox()
		gather(schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, err)
	}
	if err := errors.Join(errs...); err != nil {
		return schemas.CommandResult{Sandboxes: ended}, err
	}
	if err := s.store.DeleteGroup(ctx, g.ID); err != nil {
		return schemas.CommandResult{Sandboxes: ended}, err
	}
	g.State = schemas.GroupEnded
	return schemas.CommandResult{Group: &g, Sandboxes: ended}, nil
}

// EndGroupPart is this host's part of an end_group that a worker of
// another host runs: it ends the group's sandboxes here and sweeps this
// engine, but leaves the group's record. It takes no group lock (see
// CreateSandbox): the worker that sent it holds the group's on its host.
func (s *Service) EndGroupPart(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	g, _, err := s.store.Group(ctx, cmd.GroupID)
	if err != nil {
		if errors.Is(err, schemas.CodeNotFound) {
			return schemas.CommandResult{}, nil // ended meanwhile
		}
		return schemas.CommandResult{}, err
	}
	ended, err := s.endGroupHere(ctx, g, cmd.ID, false)
	return schemas.CommandResult{Sandboxes: ended}, err
}

// endGroupHere ends the sandboxes of group g that are on this worker's
// host, stops the group's databases when they run here (or, for a group
// without a database host, when coordinator: the worker that took the
// end_group), and removes anything left on this engine with the group's
// label. Call it with the group's lock held, or from EndGroupPart.
func (s *Service) endGroupHere(ctx context.Context, g schemas.GroupStatus, cmdID string, coordinator bool) ([]schemas.SandboxStatus, error) {
	s.pools.DropGroup(ctx, g)
	var errs []error
	var ended []schemas.SandboxStatus
	for _, id := range g.Sandboxes {
		unlockSandbox := s.locks.Lock(locks.Sandbox(id))
		st, _, err := s.store.Sandbox(ctx, id)
		if err == nil && s.hosts.Here(st.Host) {
			st, err = s.sandboxes.End(ctx, id, cmdID)
			if err != nil && wire.Error(err).Code != schemas.CodeNotFound {
				errs = append(errs, err)
			}
			if st.ID != "" {
				ended = append(ended, st)
			}
		}
		unlockSandbox()
	}
	if g.DatabaseHost == s.cfg.Host || g.DatabaseHost == "" && coordinator {
		if err := s.databases.Stop(ctx, g); err != nil {
			errs = append(errs, err)
		}
	}
	// Belt and braces: containers of the group the state does not know of
	// (a worker that died half way through a create).
	left, err := s.rt.List(ctx, s.sandboxes.OwnLabels(runtime.LabelGroup+"="+g.ID)...)
	if err != nil {
		errs = append(errs, err)
	}
	for _, c := range left {
		if c.Labels[runtime.LabelDatabase] != "" {
			if err := s.rt.Remove(ctx, c.ID); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		sb := c.Labels[runtime.LabelSandbox]
		unlockSandbox := s.locks.Lock(locks.Sandbox(sb))
		if err := s.sandboxes.RemoveResources(ctx, c.ID, sb); err != nil {
			errs = append(errs, err)
		} else if !slices.Contains(g.Sandboxes, sb) {
			if err := s.store.DeleteSandbox(ctx, sb); err != nil {
				errs = append(errs, err)
			}
		}
		unlockSandbox()
	}
	return ended, errors.Join(errs...)
}
