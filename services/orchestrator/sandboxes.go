package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/cleanup"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/lifetime"
	"github.com/sandox/sandox/services/orchestrator/pool"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// createSandbox creates sandbox cmd.SandboxID of group cmd.GroupID on
// this worker's host. A create forwarded to this host (forwarded) does not
// take the group's lock: the group command that may have sent it holds
// that lock on its own host while it waits, and two such commands waiting
// on each other's hosts would never finish. It relies on compare-and-set,
// as any two workers do.
func (w *Worker) createSandbox(ctx context.Context, cmd schemas.Command, forwarded bool) (schemas.CommandResult, error) {
	if cmd.Sandbox == nil {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeBadRequest, "create_sandbox without a sandbox spec")
	}
	spec := *cmd.Sandbox
	spec.ID = cmd.SandboxID
	if !forwarded {
		unlock := w.locks.lock(groupKey(cmd.GroupID))
		defer unlock()
	}
	g, _, err := w.store.Group(ctx, cmd.GroupID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if schemas.IsPoolID(spec.ID) {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeBadRequest, "sandbox id %q: ids that begin with %q are the warm pool's", spec.ID, schemas.PoolIDPrefix)
	}
	unlockSandbox := w.locks.lock(sandboxKey(spec.ID))
	defer unlockSandbox()
	// A fork gets its files before it starts, and the executor of a group
	// with automatic checkpoints watches its workspace: neither comes from
	// the warm pool, whose sandboxes run already.
	if spec.FromCheckpoint == nil && (g.Spec.Checkpoints == nil || !g.Spec.Checkpoints.Auto) {
		if st, ok, err := w.pools.Claim(ctx, g, spec, cmd.ID); ok {
			if err != nil {
				return schemas.CommandResult{}, err
			}
			return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, nil
		}
	}
	st, err := w.doCreateSandbox(ctx, g, spec, cmd.ID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, nil
}

// doCreateSandbox reserves the sandbox id, admits its resources, builds its
// image and creates its disk, volume and container (not started). Each
// resource's undo goes on a cleanup stack as it is made; on failure the
// stack runs, so that nothing of the sandbox is left.
func (w *Worker) doCreateSandbox(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string) (_ schemas.SandboxStatus, err error) {
	if err := schemas.ValidateID("sandbox", spec.ID); err != nil {
		return schemas.SandboxStatus{}, err
	}
	if err := images.CheckTools(spec.Tools, spec.Families, w.cfg.MaxToolFileBytes); err != nil {
		return schemas.SandboxStatus{}, schemas.Errorf(schemas.CodeBadRequest, "sandbox %s: %w", spec.ID, err)
	}
	files := images.MergeTools(g.Spec.Tools, spec.Tools)
	families, err := images.ChooseFamilies(g.Spec.Families, spec.Families)
	if err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
	}
	limits, host, err := w.resolveResources(ctx, resources.Merge(g.Spec.Compute, spec.Compute))
	if err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
	}
	dbs := g.Spec.DatabaseAccess
	if spec.Databases != nil {
		dbs = *spec.Databases
	}
	if err := dbs.Validate(); err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
	}
	egressPolicy, err := w.isolation.Resolve(g.Spec.Egress, spec.Egress)
	if err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
	}
	st := schemas.SandboxStatus{
		ID:          spec.ID,
		GroupID:     g.ID,
		State:       schemas.StateCreated,
		Host:        w.hostName,
		Families:    families,
		Tools:       images.ToolModules(families, files),
		Resources:   limits,
		Databases:   dbs,
		Egress:      &egressPolicy,
		CreatedBy:   cmdID,
		Checkpoints: g.Spec.Checkpoints,
	}
	lifetime.Set(&st, spec, time.Now().UTC())
	if _, err := w.store.CreateSandbox(ctx, st); err != nil {
		prev, done, rerr := w.redeliveredCreate(ctx, g, st.ID, cmdID, err)
		if done {
			return prev, rerr
		}
		if _, err := w.store.CreateSandbox(ctx, st); err != nil {
			return schemas.SandboxStatus{}, err
		}
	}
	undo := &cleanup.Stack{}
	defer func() {
		if err == nil {
			return
		}
		if cerr := undo.Run(ctx); cerr != nil {
			w.log.Error("a failed create left resources behind", "sandbox", st.ID, "command", cmdID, "err", cerr)
		}
	}()
	undo.Push(resRecord, func(ctx context.Context) error { return w.store.DeleteSandbox(ctx, st.ID) })

	undo.Push(resLedger, func(ctx context.Context) error { return w.ledger.Release(ctx, st.ID) })
	if err := w.ledger.Admit(ctx, st.ID, limits, host, g.Spec.Overcommit); err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", st.ID, err)
	}
	if err := w.createContainer(ctx, &st, files, undo); err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", st.ID, err)
	}
	if err := w.restoreFork(ctx, st, spec.FromCheckpoint); err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", st.ID, err)
	}
	if err := w.store.PutSandbox(ctx, &st); err != nil {
		return schemas.SandboxStatus{}, err
	}
	if err := w.store.JoinGroup(ctx, g.ID, st.ID); err != nil {
		return schemas.SandboxStatus{}, err
	}
	w.publishEvent(schemas.Event{Kind: schemas.EventCreated, GroupID: g.ID, SandboxID: st.ID, CommandID: cmdID, Message: "created", Sandbox: &st})
	return st, nil
}

// createContainer builds (or reuses) the sandbox's image, then makes its
// disk, volume and container, pushing the undo of each on undo.
func (w *Worker) createContainer(ctx context.Context, st *schemas.SandboxStatus, files []schemas.ToolFile, undo *cleanup.Stack) error {
	progress := newBuildProgress(w.publishProgress, st.GroupID, st.ID)
	image, reused, err := w.builder.SandboxImage(ctx, st.Families, files, progress)
	progress.finish(err)
	if err != nil {
		return err
	}
	st.Image, st.ImageReused = image, reused
	labels := w.labels(st)
	vol := runtime.VolumeSpec{Name: runtime.VolumeName(st.ID), Labels: labels}
	undo.Push(resDisk, func(context.Context) error { return w.detachDisk(st.ID) })
	if err := w.attachDisk(ctx, st, &vol); err != nil {
		return err
	}
	undo.Push(resVolume, func(ctx context.Context) error { return w.rt.RemoveVolume(ctx, vol.Name) })
	if err := w.rt.CreateVolume(ctx, vol); err != nil {
		return err
	}
	undo.Push(resIdentity, func(ctx context.Context) error { return w.ids.Revoke(ctx, st.ID) })
	if err := w.ids.Mint(ctx, st.ID, st.Databases...); err != nil {
		return err
	}
	spec := w.containerSpec(st, labels)
	w.ids.Bind(&spec, st.ID)
	undo.Push(resEgress, func(context.Context) error { return w.egress.Close(st.ID) })
	if err := w.isolation.Apply(ctx, &spec, st); err != nil {
		return err
	}
	w.withRuntime(&spec)
	undo.Push(resContainer, func(ctx context.Context) error { return w.rt.Remove(ctx, spec.Name) })
	id, err := w.rt.Create(ctx, spec)
	if err != nil {
		return err
	}
	st.Container = id
	return nil
}

func (w *Worker) labels(st *schemas.SandboxStatus) map[string]string {
	l := map[string]string{runtime.LabelManaged: "true", runtime.LabelGroup: st.GroupID, runtime.LabelSandbox: st.ID}
	if w.cfg.System != "" {
		l[runtime.LabelSystem] = w.cfg.System
	}
	pool.Labels(l, st)
	return l
}

// startedAs is the compare-and-set change that records the outcome of a
// start: state, reason and (when not nil) the modules the executor
// serves. It refuses, with CodeConflict, a sandbox that is being ended.
func startedAs(state schemas.SandboxState, reason string, modules []string) func(*schemas.SandboxStatus) error {
	return func(st *schemas.SandboxStatus) error {
		if st.State == schemas.StateEnding {
			return schemas.Errorf(schemas.CodeConflict, "sandbox %q was ended while it started", st.ID)
		}
		st.State, st.Reason = state, reason
		if state == schemas.StateRunning {
			st.StartedAt = time.Now().UTC()
		}
		if modules != nil {
			st.Tools = modules
		}
		return nil
	}
}

// endedWhileStarting turns the failure of a start into CodeConflict when
// the sandbox was ended meanwhile (its record is ending or gone), since
// the end removed what the start needed.
func (w *Worker) endedWhileStarting(ctx context.Context, id string, err error) error {
	st, _, gerr := w.store.Sandbox(ctx, id)
	if gerr != nil && wireError(gerr).Code == schemas.CodeNotFound || gerr == nil && st.State == schemas.StateEnding {
		return schemas.Errorf(schemas.CodeConflict, "sandbox %q was ended while it started: %w", id, err)
	}
	return err
}

// ownLabels adds, to label filters, the worker's system, so that a listing
// finds only this system's containers.
func (w *Worker) ownLabels(filters ...string) []string {
	if w.cfg.System != "" {
		filters = append(filters, runtime.LabelSystem+"="+w.cfg.System)
	}
	return filters
}

// lockSandbox takes the lock of cmd's sandbox and reads its record,
// refusing one of another group as not found. The caller runs unlock,
// also when err is not nil.
func (w *Worker) lockSandbox(ctx context.Context, cmd schemas.Command) (_ schemas.SandboxStatus, unlock func(), _ error) {
	unlock = w.locks.lock(sandboxKey(cmd.SandboxID))
	st, _, err := w.store.Sandbox(ctx, cmd.SandboxID)
	if err == nil && st.GroupID != cmd.GroupID {
		err = schemas.Errorf(schemas.CodeNotFound, "sandbox %q is not in group %q", cmd.SandboxID, cmd.GroupID)
	}
	return st, unlock, err
}

func (w *Worker) startSandbox(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	st, unlock, err := w.lockSandbox(ctx, cmd)
	defer unlock()
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if err := w.actable(st); err != nil {
		return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, err
	}
	if st.State == schemas.StateRunning {
		return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, nil
	}
	if st.State == schemas.StatePaused {
		return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, schemas.Errorf(schemas.CodeConflict, "sandbox %q is paused: resume it", st.ID)
	}
	if st.Container == "" {
		return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, schemas.Errorf(schemas.CodeConflict,
			"sandbox %s has no container: its create did not finish (the worker making it stopped); it finishes when that create is delivered again, or end the sandbox and create it again", st.ID)
	}
	st, err = w.doStartSandbox(ctx, st, cmd.ID)
	return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, err
}

// doStartSandbox starts the container and waits until its executor answers.
func (w *Worker) doStartSandbox(ctx context.Context, st schemas.SandboxStatus, cmdID string) (schemas.SandboxStatus, error) {
	rw, err := w.watchReady(st.ID)
	if err != nil {
		return st, err
	}
	defer rw.Close()
	if err := w.rt.Start(ctx, st.Container); err != nil {
		return st, w.endedWhileStarting(ctx, st.ID, fmt.Errorf("sandbox %s: %w", st.ID, err))
	}
	ready, err := w.awaitReady(ctx, st, rw)
	if err != nil {
		err = w.endedWhileStarting(ctx, st.ID, err)
		if cur, cerr := w.store.UpdateSandbox(ctx, st.ID, startedAs(schemas.StateFailed, err.Error(), nil)); cerr == nil {
			st = cur
			w.publishEvent(schemas.Event{Kind: schemas.EventStartFailed, GroupID: st.GroupID, SandboxID: st.ID, CommandID: cmdID, Reason: st.Reason, Message: st.Reason, Sandbox: &st})
		}
		return st, err
	}
	// Compare-and-set, not a plain write: an end that began meanwhile (on
	// any worker) keeps its state, and the start answers conflict.
	st, err = w.store.UpdateSandbox(ctx, st.ID, startedAs(schemas.StateRunning, "", ready.Modules))
	if err != nil {
		return st, err
	}
	w.publishEvent(schemas.Event{Kind: schemas.EventStarted, GroupID: st.GroupID, SandboxID: st.ID, CommandID: cmdID, Message: "running", Sandbox: &st})
	return st, nil
}

func (w *Worker) endSandbox(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	st, unlock, err := w.lockSandbox(ctx, cmd)
	defer unlock()
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if w.ownedHere(st.Host) {
		st, err = w.doEndSandbox(ctx, cmd.SandboxID, cmd.ID)
	} else {
		// Lost, or its host is silent (route sent it here): nothing of it
		// can be reached, so it is forgotten.
		st, err = w.forgetSandbox(ctx, cmd.SandboxID, cmd.ID)
	}
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if _, err := w.store.UpdateGroup(ctx, st.GroupID, func(g *schemas.GroupStatus) error {
		g.Sandboxes = slices.DeleteFunc(g.Sandboxes, func(id string) bool { return id == st.ID })
		return nil
	}); err != nil && wireError(err).Code != schemas.CodeNotFound {
		return schemas.CommandResult{}, err
	}
	return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, nil
}

// doEndSandbox removes the sandbox's container and volume and forgets it.
func (w *Worker) doEndSandbox(ctx context.Context, id, cmdID string) (schemas.SandboxStatus, error) {
	// Ending first, so that the engine's events of the removal are not
	// taken for a crash.
	st, err := w.store.UpdateSandbox(ctx, id, func(st *schemas.SandboxStatus) error {
		st.State = schemas.StateEnding
		return nil
	})
	if err != nil {
		return st, err
	}
	container := st.Container
	if container == "" {
		container = runtime.ContainerName(id)
	}
	if err := w.removeSandboxResources(ctx, container, id); err != nil {
		return st, err
	}
	if err := w.removeClaimed(ctx, st); err != nil {
		return st, err
	}
	if err := w.store.DeleteSandbox(ctx, id); err != nil {
		return st, err
	}
	st.State, st.Container = schemas.StateEnded, ""
	w.publishEvent(schemas.Event{Kind: schemas.EventEnded, GroupID: st.GroupID, SandboxID: id, CommandID: cmdID, Message: "ended", Sandbox: &st})
	return st, nil
}

// actable refuses, with CodeConflict, to act on a lost sandbox, and with
// CodeUnavailable on one of another host (whose host is silent, or route
// would have sent the command there).
func (w *Worker) actable(st schemas.SandboxStatus) error {
	if st.State == schemas.StateLost {
		return schemas.Errorf(schemas.CodeConflict, "sandbox %q is lost (%s); end it", st.ID, st.Reason)
	}
	if !w.ownedHere(st.Host) {
		return schemas.Errorf(schemas.CodeUnavailable, "sandbox %q is on host %s, which is not answering", st.ID, st.Host)
	}
	return nil
}

// forgetSandbox ends a sandbox of another host that cannot be reached (it
// is lost, or its host is silent): it releases its allocation in that
// host's ledger and deletes its record, touching no engine. Its host
// removes its container when it comes back (reconcile).
func (w *Worker) forgetSandbox(ctx context.Context, id, cmdID string) (schemas.SandboxStatus, error) {
	st, err := w.store.UpdateSandbox(ctx, id, func(st *schemas.SandboxStatus) error {
		st.State = schemas.StateEnding
		return nil
	})
	if err != nil {
		return st, err
	}
	if h, err := w.store.Host(ctx, st.Host); err == nil && h.EngineID != "" {
		if err := w.store.ReleaseLedger(ctx, state.LedgerKey(h.EngineID), id); err != nil {
			return st, err
		}
	}
	if err := w.store.DeleteSandbox(ctx, id); err != nil {
		return st, err
	}
	st.State, st.Container = schemas.StateEnded, ""
	w.publishEvent(schemas.Event{Kind: schemas.EventEnded, GroupID: st.GroupID, SandboxID: id, CommandID: cmdID, Message: "ended (forgotten: its host " + st.Host + " cannot be reached)", Sandbox: &st})
	return st, nil
}
