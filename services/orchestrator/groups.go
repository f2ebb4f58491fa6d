package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/egressnet"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

func (w *Worker) createGroup(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	if cmd.Group == nil {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeBadRequest, "create_group without a group spec")
	}
	spec := *cmd.Group
	spec.ID = cmd.GroupID
	if err := w.checkGroupSpec(spec); err != nil {
		return schemas.CommandResult{}, err
	}
	g := schemas.GroupStatus{ID: spec.ID, State: schemas.GroupCreated, Spec: spec, Sandboxes: []string{}, CreatedAt: time.Now().UTC()}
	if spec.TTLSeconds > 0 {
		g.ExpiresAt = g.CreatedAt.Add(seconds(spec.TTLSeconds))
	}
	if err := w.store.CreateGroup(ctx, &g); err != nil {
		return schemas.CommandResult{}, err
	}
	w.pools.wake()
	return schemas.CommandResult{Group: &g}, nil
}

// checkGroupSpec validates everything in a group spec that can be checked
// before any sandbox exists, so that a bad spec is refused whole.
func (w *Worker) checkGroupSpec(spec schemas.GroupSpec) error {
	if err := schemas.ValidateID("group", spec.ID); err != nil {
		return err
	}
	var errs []error
	errs = append(errs, images.CheckTools(spec.Tools, spec.Families, w.cfg.MaxToolFileBytes))
	if _, err := resources.Parse(spec.Compute); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, spec.DatabaseAccess.Validate(), checkPoolSpec(spec.Pool))
	if spec.Egress != nil {
		errs = append(errs, egressnet.Check(*spec.Egress))
	}
	seen := map[string]bool{}
	for _, sb := range spec.Sandboxes {
		if sb.Egress != nil {
			errs = append(errs, egressnet.Check(*sb.Egress))
		}
		if sb.Databases != nil {
			errs = append(errs, sb.Databases.Validate())
		}
		if err := schemas.ValidateID("sandbox", sb.ID); err != nil {
			errs = append(errs, err)
		}
		if seen[sb.ID] {
			errs = append(errs, schemas.Errorf(schemas.CodeBadRequest, "sandbox %q is listed twice", sb.ID))
		}
		seen[sb.ID] = true
		errs = append(errs, images.CheckTools(sb.Tools, sb.Families, w.cfg.MaxToolFileBytes))
		if _, err := resources.Parse(resources.Merge(spec.Compute, sb.Compute)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return schemas.Errorf(schemas.CodeBadRequest, "group %s: %w", spec.ID, err)
	}
	return nil
}

// startGroup creates and starts the group's initial sandboxes. A sandbox
// that fails does not stop the others; the result lists every sandbox and
// the error names those that failed.
func (w *Worker) startGroup(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	unlock := w.locks.lock(groupKey(cmd.GroupID))
	defer unlock()
	g, _, err := w.store.Group(ctx, cmd.GroupID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if g.State == schemas.GroupRunning {
		return schemas.CommandResult{Group: &g}, nil // starting twice is harmless
	}
	res := schemas.CommandResult{}
	// The databases first: running, answering and populated before any
	// sandbox may use them.
	g, err = w.databases.Start(ctx, g)
	if err != nil {
		return schemas.CommandResult{Group: &g}, err
	}
	if err := w.databases.Populate(ctx, g); err != nil {
		return schemas.CommandResult{Group: &g}, err
	}
	var errs []error
	for _, spec := range g.Spec.Sandboxes {
		st, err := w.ensureRunningSomewhere(ctx, g.ID, spec, cmd.ID)
		if err != nil {
			errs = append(errs, err)
		}
		if st.ID != "" {
			res.Sandboxes = append(res.Sandboxes, st)
		}
	}
	g, err = w.store.UpdateGroup(ctx, g.ID, func(g *schemas.GroupStatus) error {
		g.State = schemas.GroupRunning
		return nil
	})
	res.Group = &g
	if err != nil {
		return res, err
	}
	if err := errors.Join(errs...); err != nil {
		return res, schemas.Errorf(wireError(errs[0]).Code, "group %s started with failures: %w", g.ID, err)
	}
	return res, nil
}

// ensureRunningSomewhere creates (unless it exists) and starts an initial
// sandbox of group id on its host: where it is recorded, or where
// placement puts it. On another host, that host's workers run the create
// and the start (delegate), with command ids made of cmdID.
func (w *Worker) ensureRunningSomewhere(ctx context.Context, id string, spec schemas.SandboxSpec, cmdID string) (schemas.SandboxStatus, error) {
	// Read afresh: the sandboxes created so far count for placement.
	g, _, err := w.store.Group(ctx, id)
	if err != nil {
		return schemas.SandboxStatus{}, err
	}
	st, _, err := w.store.Sandbox(ctx, spec.ID)
	recorded := err == nil
	host := st.Host
	if !recorded {
		if host, err = w.placer.Place(ctx, g, spec); err != nil {
			return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
		}
	}
	if w.ownedHere(host) {
		return w.ensureSandboxRunning(ctx, g, spec, cmdID)
	}
	if !recorded {
		create := schemas.Command{ID: cmdID + "-create-" + spec.ID, Kind: schemas.CreateSandbox, GroupID: g.ID, SandboxID: spec.ID, Sandbox: &spec}
		res, err := w.delegate(ctx, host, create)
		if err := resultError(res, err); err != nil && wireError(err).Code != schemas.CodeAlreadyExists {
			return schemas.SandboxStatus{}, err
		}
		// The host may have passed the create on (retryElsewhere): start
		// it where it was made.
		if st, _, err = w.store.Sandbox(ctx, spec.ID); err != nil {
			return schemas.SandboxStatus{}, err
		}
		if host = st.Host; w.ownedHere(host) {
			return w.ensureSandboxRunning(ctx, g, spec, cmdID)
		}
	}
	res, err := w.delegate(ctx, host, schemas.Command{ID: cmdID + "-start-" + spec.ID, Kind: schemas.StartSandbox, GroupID: g.ID, SandboxID: spec.ID})
	if len(res.Sandboxes) == 1 {
		st = res.Sandboxes[0]
	}
	return st, resultError(res, err)
}

// ensureSandboxRunning creates (unless it exists) and starts an initial
// sandbox of a group; starting a group twice leaves running ones alone. A
// pooled sandbox that fits is claimed first, as for create_sandbox.
func (w *Worker) ensureSandboxRunning(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string) (schemas.SandboxStatus, error) {
	unlock := w.locks.lock(sandboxKey(spec.ID))
	defer unlock()
	st, _, err := w.store.Sandbox(ctx, spec.ID)
	if err != nil {
		var claimed bool
		if st, claimed, err = w.claimPooled(ctx, g, spec, cmdID); !claimed {
			st, err = w.doCreateSandbox(ctx, g, spec, cmdID)
		}
		if err != nil {
			return st, err
		}
	}
	if st.State == schemas.StateRunning || st.State == schemas.StatePaused {
		return st, nil // a paused sandbox stays paused (docs/pause.md)
	}
	return w.doStartSandbox(ctx, st, cmdID)
}

// endGroup ends every sandbox of the group on every host, removes anything
// left with the group's label on every live host, and forgets the group.
// Every other live host runs its part (endGroupPart, through its host
// subject) while this worker runs its own; the sandboxes of hosts that are
// not live are forgotten (their host removes what is left when it
// returns).
func (w *Worker) endGroup(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	unlock := w.locks.lock(groupKey(cmd.GroupID))
	defer unlock()
	g, _, err := w.store.Group(ctx, cmd.GroupID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	hosts, err := w.store.LiveHosts(ctx, w.cfg.HostLostAfter)
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
		if name == w.hostName {
			continue
		}
		parts.Go(func() {
			res, err := w.delegate(ctx, name, schemas.Command{ID: cmd.ID + "-end-" + name, Kind: schemas.EndGroup, GroupID: g.ID})
			gather(res, resultError(res, err))
		})
	}
	here, err := w.endGroupHere(ctx, g, cmd.ID, true)
	gather(schemas.CommandResult{Sandboxes: here}, err)
	parts.Wait()
	for _, id := range g.Sandboxes {
		st, _, err := w.store.Sandbox(ctx, id)
		if err != nil || w.ownedHere(st.Host) || w.hostLive(ctx, st.Host) {
			continue
		}
		unlockSandbox := w.locks.lock(sandboxKey(id))
		st, err = w.forgetSandbox(ctx, id, cmd.ID)
		unlockSandbox()
		gather(schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, err)
	}
	if err := errors.Join(errs...); err != nil {
		return schemas.CommandResult{Sandboxes: ended}, err
	}
	if err := w.store.DeleteGroup(ctx, g.ID); err != nil {
		return schemas.CommandResult{Sandboxes: ended}, err
	}
	g.State = schemas.GroupEnded
	return schemas.CommandResult{Group: &g, Sandboxes: ended}, nil
}

// endGroupPart is this host's part of an end_group that a worker of
// another host runs: it ends the group's sandboxes here and sweeps this
// engine, but leaves the group's record. It takes no group lock (see
// createSandbox): the worker that sent it holds the group's on its host.
func (w *Worker) endGroupPart(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	g, _, err := w.store.Group(ctx, cmd.GroupID)
	if err != nil {
		return schemas.CommandResult{}, ignoreNotFound(err)
	}
	ended, err := w.endGroupHere(ctx, g, cmd.ID, false)
	return schemas.CommandResult{Sandboxes: ended}, err
}

// endGroupHere ends the sandboxes of group g that are on this worker's
// host, stops the group's databases when they run here (or, for a group
// without a database host, when coordinator: the worker that took the
// end_group), and removes anything left on this engine with the group's
// label. Call it with the group's lock held, or from endGroupPart.
func (w *Worker) endGroupHere(ctx context.Context, g schemas.GroupStatus, cmdID string, coordinator bool) ([]schemas.SandboxStatus, error) {
	w.dropGroupPool(ctx, g)
	var errs []error
	var ended []schemas.SandboxStatus
	for _, id := range g.Sandboxes {
		unlockSandbox := w.locks.lock(sandboxKey(id))
		st, _, err := w.store.Sandbox(ctx, id)
		if err == nil && w.ownedHere(st.Host) {
			st, err = w.doEndSandbox(ctx, id, cmdID)
			if err != nil && wireError(err).Code != schemas.CodeNotFound {
				errs = append(errs, err)
			}
			if st.ID != "" {
				ended = append(ended, st)
			}
		}
		unlockSandbox()
	}
	if g.DatabaseHost == w.hostName || g.DatabaseHost == "" && coordinator {
		if err := w.databases.Stop(ctx, g); err != nil {
			errs = append(errs, err)
		}
	}
	// Belt and braces: containers of the group the state does not know of
	// (a worker that died half way through a create).
	left, err := w.rt.List(ctx, w.ownLabels(runtime.LabelGroup+"="+g.ID)...)
	if err != nil {
		errs = append(errs, err)
	}
	for _, c := range left {
		if c.Labels[runtime.LabelDatabase] != "" {
			if err := w.rt.Remove(ctx, c.ID); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		sb := c.Labels[runtime.LabelSandbox]
		unlockSandbox := w.locks.lock(sandboxKey(sb))
		if err := w.removeSandboxResources(ctx, c.ID, sb); err != nil {
			errs = append(errs, err)
		} else if !slices.Contains(g.Sandboxes, sb) {
			if err := w.store.DeleteSandbox(ctx, sb); err != nil {
				errs = append(errs, err)
			}
		}
		unlockSandbox()
	}
	return ended, errors.Join(errs...)
}
