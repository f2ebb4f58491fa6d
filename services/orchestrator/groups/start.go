package groups

import (
	"context"
	"errors"
	"fmt"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/locks"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// StartGroup creates and starts the group's initial sandboxes. A sandbox
// that fails does not stop the others; the result lists every sandbox and
// the error names those that failed.
func (s *Service) StartGroup(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	unlock := s.locks.Lock(locks.Group(cmd.GroupID))
	defer unlock()
	g, _, err := s.store.Group(ctx, cmd.GroupID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if g.State == schemas.GroupRunning {
		return schemas.CommandResult{Group: &g}, nil // starting twice is harmless
	}
	res := schemas.CommandResult{}
	// The databases first: running, answering and populated before any
	// sandbox may use them.
	g, err = s.databases.Start(ctx, g)
	if err != nil {
		return schemas.CommandResult{Group: &g}, err
	}
	if err := s.databases.Populate(ctx, g); err != nil {
		return schemas.CommandResult{Group: &g}, err
	}
	var errs []error
	for _, spec := range g.Spec.Sandboxes {
		st, err := s.ensureRunningSomewhere(ctx, g.ID, spec, cmd.ID)
		if err != nil {
			errs = append(errs, err)
		}
		if st.ID != "" {
			res.Sandboxes = append(res.Sandboxes, st)
		}
	}
	g, err = s.store.UpdateGroup(ctx, g.ID, func(g *schemas.GroupStatus) error {
		g.State = schemas.GroupRunning
		return nil
	})
	res.Group = &g
	if err != nil {
		return res, err
	}
	if err := errors.Join(errs...); err != nil {
		return res, schemas.Errorf(wire.Error(errs[0]).Code, "group %s started with failures: %w", g.ID, err)
	}
	return res, nil
}

// ensureRunningSomewhere creates (unless it exists) and starts an initial
// sandbox of group id on its host: where it is recorded, or where
// placement puts it. On another host, that host's workers run the create
// and the start (delegate), with command ids made of cmdID.
func (s *Service) ensureRunningSomewhere(ctx context.Context, id string, spec schemas.SandboxSpec, cmdID string) (schemas.SandboxStatus, error) {
	// Read afresh: the sandboxes created so far count for placement.
	g, _, err := s.store.Group(ctx, id)
	if err != nil {
		return schemas.SandboxStatus{}, err
	}
	st, _, err := s.store.Sandbox(ctx, spec.ID)
	recorded := err == nil
	host := st.Host
	if !recorded {
		if host, err = s.placer.Place(ctx, g, spec); err != nil {
			return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
		}
	}
	if s.hosts.Here(host) {
		return s.ensureSandboxRunning(ctx, g, spec, cmdID)
	}
	if !recorded {
		create := schemas.Command{ID: cmdID + "-create-" + spec.ID, Kind: schemas.CreateSandbox, GroupID: g.ID, SandboxID: spec.ID, Sandbox: &spec}
		res, err := s.delegator.Delegate(ctx, host, create)
		if err := resultError(res, err); err != nil && wire.Error(err).Code != schemas.CodeAlreadyExists {
			return schemas.SandboxStatus{}, err
		}
		// The host may have passed the create on (retryElsewhere): start
		// it where it was made.
		if st, _, err = s.store.Sandbox(ctx, spec.ID); err != nil {
			return schemas.SandboxStatus{}, err
		}
		if host = st.Host; s.hosts.Here(host) {
			return s.ensureSandboxRunning(ctx, g, spec, cmdID)
		}
	}
	res, err := s.delegator.Delegate(ctx, host, schemas.Command{ID: cmdID + "-start-" + spec.ID, Kind: schemas.StartSandbox, GroupID: g.ID, SandboxID: spec.ID})
	if len(res.Sandboxes) == 1 {
		st = res.Sandboxes[0]
	}
	return st, resultError(res, err)
}

// ensureSandboxRunning creates (unless it exists) and starts an initial
// sandbox of a group; starting a group twice leaves running ones alone. A
// pooled sandbox that fits is claimed first, as for create_sandbox.
func (s *Service) ensureSandboxRunning(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string) (schemas.SandboxStatus, error) {
	unlock := s.locks.Lock(locks.Sandbox(spec.ID))
	defer unlock()
	st, _, err := s.store.Sandbox(ctx, spec.ID)
	if err != nil {
		var claimed bool
		if st, claimed, err = s.pools.Claim(ctx, g, spec, cmdID); !claimed {
			st, err = s.sandboxes.Make(ctx, g, spec, cmdID)
		}
		if err != nil {
			return st, err
		}
	}
	if st.State == schemas.StateRunning || st.State == schemas.StatePaused {
		return st, nil // a paused sandbox stays paused (docs/pause.md)
	}
	return s.sandboxes.Start(ctx, st, cmdID)
}
