package sandboxes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/cleanup"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/lifetime"
	"github.com/sandox/sandox/services/orchestrator/locks"
	"github.com/sandox/sandox/services/orchestrator/pool"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// Make reserves the sandbox id, admits its resources, builds its
// image and creates its disk, volume and container (not started). Each
// resource's undo goes on a cleanup stack as it is made; on failure the
// stack runs, so that nothing of the sandbox is left.
func (s *Service) Make(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string) (schemas.SandboxStatus, error) {
	return s.MakeWithImage(ctx, g, spec, cmdID, nil)
}

// MakeWithImage is Make with the sandbox's image given, as BuildImage
// found or built it for the same group and spec; nil builds it, as Make
// does.
func (s *Service) MakeWithImage(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string, img *images.Resolved) (_ schemas.SandboxStatus, err error) {
	if err := schemas.ValidateID("sandbox", spec.ID); err != nil {
		return schemas.SandboxStatus{}, err
	}
	families, files, err := s.imageInputs(g, spec)
	if err != nil {
		return schemas.SandboxStatus{}, err
	}
	limits, host, err := s.resolveResources(ctx, resources.Merge(g.Spec.Compute, spec.Compute))
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
	egressPolicy, err := s.isolation.Resolve(g.Spec.Egress, spec.Egress)
	if err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
	}
	st := schemas.SandboxStatus{
		ID:          spec.ID,
		GroupID:     g.ID,
		State:       schemas.StateCreated,
		Host:        s.cfg.Host,
		Families:    families,
		Tools:       images.ToolModules(families, files),
		Resources:   limits,
		Databases:   dbs,
		Egress:      &egressPolicy,
		CreatedBy:   cmdID,
		Checkpoints: g.Spec.Checkpoints,
	}
	lifetime.Set(&st, spec, time.Now().UTC())
	if _, err := s.store.CreateSandbox(ctx, st); err != nil {
		prev, done, rerr := s.redeliveredCreate(ctx, g, st.ID, cmdID, err)
		if done {
			return prev, rerr
		}
		if _, err := s.store.CreateSandbox(ctx, st); err != nil {
			return schemas.SandboxStatus{}, err
		}
	}
	undo := &cleanup.Stack{}
	defer func() {
		if err == nil {
			return
		}
		if cerr := undo.Run(ctx); cerr != nil {
			s.log.Error("a failed create left resources behind", "sandbox", st.ID, "command", cmdID, "err", cerr)
		}
	}()
	undo.Push(resRecord, func(ctx context.Context) error { return s.store.DeleteSandbox(ctx, st.ID) })

	undo.Push(resLedger, func(ctx context.Context) error { return s.ledger.Release(ctx, st.ID) })
	if err := s.ledger.Admit(ctx, st.ID, limits, host, g.Spec.Overcommit); err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", st.ID, err)
	}
	if err := s.createContainer(ctx, &st, files, img, undo); err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", st.ID, err)
	}
	if err := s.restoreFork(ctx, st, spec.FromCheckpoint); err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", st.ID, err)
	}
	if err := s.store.PutSandbox(ctx, &st); err != nil {
		return schemas.SandboxStatus{}, err
	}
	if err := s.store.JoinGroup(ctx, g.ID, st.ID); err != nil {
		return schemas.SandboxStatus{}, err
	}
	s.publish(schemas.Event{Kind: schemas.EventCreated, GroupID: g.ID, SandboxID: st.ID, CommandID: cmdID, Message: "created", Sandbox: &st})
	return st, nil
}

// createContainer builds (or reuses) the sandbox's image unless img gives
// it, then makes its disk, volume and container, pushing the undo of each
// on undo.
func (s *Service) createContainer(ctx context.Context, st *schemas.SandboxStatus, files []schemas.ToolFile, img *images.Resolved, undo *cleanup.Stack) error {
	if img == nil {
		progress := newBuildProgress(s.publishProgress, st.GroupID, st.ID)
		ref, reused, err := s.builder.SandboxImage(ctx, st.Families, files, progress)
		progress.finish(err)
		if err != nil {
			return err
		}
		img = &images.Resolved{Ref: ref, Reused: reused}
	}
	st.Image, st.ImageReused = img.Ref, img.Reused
	labels := s.labels(st)
	vol := runtime.VolumeSpec{Name: runtime.VolumeName(st.ID), Labels: labels}
	undo.Push(resDisk, func(context.Context) error { return s.detachDisk(st.ID) })
	if err := s.attachDisk(ctx, st, &vol); err != nil {
		return err
	}
	undo.Push(resVolume, func(ctx context.Context) error { return s.rt.RemoveVolume(ctx, vol.Name) })
	if err := s.rt.CreateVolume(ctx, vol); err != nil {
		return err
	}
	undo.Push(resIdentity, func(ctx context.Context) error { return s.ids.Revoke(ctx, st.ID) })
	if err := s.ids.Mint(ctx, st.ID, st.Databases...); err != nil {
		return err
	}
	spec := s.containerSpec(st, labels)
	s.ids.Bind(&spec, st.ID)
	undo.Push(resEgress, func(context.Context) error { return s.egress.Close(st.ID) })
	if err := s.isolation.Apply(ctx, &spec, st); err != nil {
		return err
	}
	s.withRuntime(&spec)
	undo.Push(resContainer, func(ctx context.Context) error { return s.rt.Remove(ctx, spec.Name) })
	id, err := s.rt.Create(ctx, spec)
	if err != nil {
		return err
	}
	st.Container = id
	return nil
}

func (s *Service) labels(st *schemas.SandboxStatus) map[string]string {
	l := map[string]string{runtime.LabelManaged: "true", runtime.LabelGroup: st.GroupID, runtime.LabelSandbox: st.ID}
	if s.cfg.System != "" {
		l[runtime.LabelSystem] = s.cfg.System
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
func (s *Service) endedWhileStarting(ctx context.Context, id string, err error) error {
	st, _, gerr := s.store.Sandbox(ctx, id)
	if gerr != nil && errors.Is(gerr, schemas.CodeNotFound) || gerr == nil && st.State == schemas.StateEnding {
		return schemas.Errorf(schemas.CodeConflict, "sandbox %q was ended while it started: %w", id, err)
	}
	return err
}

// OwnLabels adds, to label filters, the worker's system, so that a listing
// finds only this system's containers.
func (s *Service) OwnLabels(filters ...string) []string {
	if s.cfg.System != "" {
		filters = append(filters, runtime.LabelSystem+"="+s.cfg.System)
	}
	return filters
}

// lockSandbox takes the lock of cmd's sandbox and reads its record,
// refusing one of another group as not found. The caller runs unlock,
// also when err is not nil.
func (s *Service) lockSandbox(ctx context.Context, cmd schemas.Command) (_ schemas.SandboxStatus, unlock func(), _ error) {
	unlock = s.locks.Lock(locks.Sandbox(cmd.SandboxID))
	st, _, err := s.store.Sandbox(ctx, cmd.SandboxID)
	if err == nil && st.GroupID != cmd.GroupID {
		err = schemas.Errorf(schemas.CodeNotFound, "sandbox %q is not in group %q", cmd.SandboxID, cmd.GroupID)
	}
	return st, unlock, err
}

// StartSandbox runs start_sandbox: it starts the created or failed
// sandbox cmd.SandboxID of this host under its lock (Start) and answers
// with its record. A running sandbox is no change; a paused one, a lost
// one or one without a container is refused with CodeConflict.
func (s *Service) StartSandbox(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	st, unlock, err := s.lockSandbox(ctx, cmd)
	defer unlock()
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if err := s.actable(st); err != nil {
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
	st, err = s.Start(ctx, st, cmd.ID)
	return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, err
}

// Start starts the container and waits until its executor answers.
func (s *Service) Start(ctx context.Context, st schemas.SandboxStatus, cmdID string) (schemas.SandboxStatus, error) {
	rw, err := s.watchReady(st.ID)
	if err != nil {
		return st, err
	}
	defer rw.Close()
	if err := s.rt.Start(ctx, st.Container); err != nil {
		return st, s.endedWhileStarting(ctx, st.ID, fmt.Errorf("sandbox %s: %w", st.ID, err))
	}
	ready, err := s.awaitReady(ctx, st, rw)
	if err != nil {
		err = s.endedWhileStarting(ctx, st.ID, err)
		if cur, cerr := s.store.UpdateSandbox(ctx, st.ID, startedAs(schemas.StateFailed, err.Error(), nil)); cerr == nil {
			st = cur
			s.publish(schemas.Event{Kind: schemas.EventStartFailed, GroupID: st.GroupID, SandboxID: st.ID, CommandID: cmdID, Reason: st.Reason, Message: st.Reason, Sandbox: &st})
		}
		return st, err
	}
	// Compare-and-set, not a plain write: an end that began meanwhile (on
	// any worker) keeps its state, and the start answers conflict.
	st, err = s.store.UpdateSandbox(ctx, st.ID, startedAs(schemas.StateRunning, "", ready.Modules))
	if err != nil {
		return st, err
	}
	s.publish(schemas.Event{Kind: schemas.EventStarted, GroupID: st.GroupID, SandboxID: st.ID, CommandID: cmdID, Message: "running", Sandbox: &st})
	return st, nil
}

// EndSandbox runs end_sandbox under the sandbox's lock: it ends a sandbox
// of this host (End), forgets one whose host cannot be reached (Forget),
// and takes it out of its group's list.
func (s *Service) EndSandbox(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	st, unlock, err := s.lockSandbox(ctx, cmd)
	defer unlock()
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if s.here(st.Host) {
		st, err = s.End(ctx, cmd.SandboxID, cmd.ID)
	} else {
		// Lost, or its host is silent (route sent it here): nothing of it
		// can be reached, so it is forgotten.
		st, err = s.Forget(ctx, cmd.SandboxID, cmd.ID)
	}
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if _, err := s.store.UpdateGroup(ctx, st.GroupID, func(g *schemas.GroupStatus) error {
		g.Sandboxes = slices.DeleteFunc(g.Sandboxes, func(id string) bool { return id == st.ID })
		return nil
	}); err != nil && !errors.Is(err, schemas.CodeNotFound) {
		return schemas.CommandResult{}, err
	}
	return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, nil
}

// End removes the sandbox's container and volume and forgets it.
func (s *Service) End(ctx context.Context, id, cmdID string) (schemas.SandboxStatus, error) {
	// Ending first, so that the engine's events of the removal are not
	// taken for a crash.
	st, err := s.store.UpdateSandbox(ctx, id, func(st *schemas.SandboxStatus) error {
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
	if err := s.RemoveResources(ctx, container, id); err != nil {
		return st, err
	}
	if err := s.removeClaimed(ctx, st); err != nil {
		return st, err
	}
	if err := s.store.DeleteSandbox(ctx, id); err != nil {
		return st, err
	}
	st.State, st.Container = schemas.StateEnded, ""
	s.publish(schemas.Event{Kind: schemas.EventEnded, GroupID: st.GroupID, SandboxID: id, CommandID: cmdID, Message: "ended", Sandbox: &st})
	return st, nil
}

// actable refuses, with CodeConflict, to act on a lost sandbox, and with
// CodeUnavailable on one of another host (whose host is silent, or route
// would have sent the command there).
func (s *Service) actable(st schemas.SandboxStatus) error {
	if st.State == schemas.StateLost {
		return schemas.Errorf(schemas.CodeConflict, "sandbox %q is lost (%s); end it", st.ID, st.Reason)
	}
	if !s.here(st.Host) {
		return schemas.Errorf(schemas.CodeUnavailable, "sandbox %q is on host %s, which is not answering", st.ID, st.Host)
	}
	return nil
}

// Forget ends a sandbox of another host that cannot be reached (it
// is lost, or its host is silent): it releases its allocation in that
// host's ledger and deletes its record, touching no engine. Its host
// removes its container when it comes back (reconcile).
func (s *Service) Forget(ctx context.Context, id, cmdID string) (schemas.SandboxStatus, error) {
	st, err := s.store.UpdateSandbox(ctx, id, func(st *schemas.SandboxStatus) error {
		st.State = schemas.StateEnding
		return nil
	})
	if err != nil {
		return st, err
	}
	if h, err := s.store.Host(ctx, st.Host); err == nil && h.EngineID != "" {
		if err := s.store.ReleaseLedger(ctx, state.LedgerKey(h.EngineID), id); err != nil {
			return st, err
		}
	}
	if err := s.store.DeleteSandbox(ctx, id); err != nil {
		return st, err
	}
	st.State, st.Container = schemas.StateEnded, ""
	s.publish(schemas.Event{Kind: schemas.EventEnded, GroupID: st.GroupID, SandboxID: id, CommandID: cmdID, Message: "ended (forgotten: its host " + st.Host + " cannot be reached)", Sandbox: &st})
	return st, nil
}
