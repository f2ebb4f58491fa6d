package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
)

func (w *Worker) createSandbox(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	if cmd.Sandbox == nil {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeBadRequest, "create_sandbox without a sandbox spec")
	}
	spec := *cmd.Sandbox
	spec.ID = cmd.SandboxID
	unlock := w.locks.lock("group/" + cmd.GroupID)
	defer unlock()
	g, _, err := w.store.group(ctx, cmd.GroupID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	st, err := w.doCreateSandbox(ctx, g, spec, cmd.ID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, nil
}

// doCreateSandbox reserves the sandbox id, builds its image and creates its
// container (not started). On failure it undoes what it did.
func (w *Worker) doCreateSandbox(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string) (schemas.SandboxStatus, error) {
	if err := schemas.ValidateID("sandbox", spec.ID); err != nil {
		return schemas.SandboxStatus{}, err
	}
	if err := w.checkTools(spec.Tools); err != nil {
		return schemas.SandboxStatus{}, schemas.Errorf(schemas.CodeBadRequest, "sandbox %s: %v", spec.ID, err)
	}
	files := mergeTools(g.Spec.Tools, spec.Tools)
	limits, host, err := w.resolveResources(ctx, resources.Merge(g.Spec.Compute, spec.Compute))
	if err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
	}
	dbs := g.Spec.DatabaseAccess
	if spec.Databases != nil {
		dbs = *spec.Databases
	}
	egressPolicy, err := w.resolveEgress(g.Spec.Egress, spec.Egress)
	if err != nil {
		return schemas.SandboxStatus{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
	}
	st := schemas.SandboxStatus{
		ID:        spec.ID,
		GroupID:   g.ID,
		State:     schemas.StateCreated,
		Tools:     toolModules(files),
		Resources: limits,
		Databases: dbs,
		Egress:    &egressPolicy,
	}
	if _, err := w.store.createSandbox(ctx, st); err != nil {
		return schemas.SandboxStatus{}, err
	}
	err = w.admit(ctx, st.ID, limits, host, g.Spec.Overcommit)
	if err == nil {
		if err = w.createContainer(ctx, &st, files); err != nil {
			err = fmt.Errorf("sandbox %s: %w", st.ID, err)
		}
	}
	if err != nil {
		// Undo under a context that outlives a cancelled request.
		cctx := context.WithoutCancel(ctx)
		_ = w.removeSandboxResources(cctx, ContainerName(st.ID), st.ID)
		_ = w.store.deleteSandbox(cctx, st.ID)
		return schemas.SandboxStatus{}, err
	}
	if err := w.store.putSandbox(ctx, &st); err != nil {
		return st, err
	}
	if _, err := w.store.updateGroup(ctx, g.ID, func(g *schemas.GroupStatus) error {
		if !slices.Contains(g.Sandboxes, st.ID) {
			g.Sandboxes = append(g.Sandboxes, st.ID)
		}
		return nil
	}); err != nil {
		return st, err
	}
	w.publishEvent(schemas.Event{Kind: schemas.EventStateChanged, GroupID: g.ID, SandboxID: st.ID, CommandID: cmdID, Message: "created", Sandbox: &st})
	return st, nil
}

func (w *Worker) createContainer(ctx context.Context, st *schemas.SandboxStatus, files []schemas.ToolFile) error {
	var progress strings.Builder
	image, reused, err := w.sandboxImage(ctx, files, &progress)
	if err != nil {
		return err
	}
	st.Image, st.ImageReused = image, reused
	labels := w.labels(st)
	opts, err := w.volumeOptions(ctx, st)
	if err != nil {
		return err
	}
	if err := w.rt.CreateVolume(ctx, VolumeName(st.ID), labels, opts); err != nil {
		return err
	}
	if err := w.mintIdentity(ctx, st.ID); err != nil {
		return err
	}
	spec := w.containerSpec(st, labels)
	w.withIdentity(&spec, st.ID)
	if err := w.withNetwork(&spec, st); err != nil {
		return err
	}
	w.withRuntime(&spec)
	id, err := w.rt.Create(ctx, spec)
	if err != nil {
		return err
	}
	st.Container = id
	return nil
}

func (w *Worker) labels(st *schemas.SandboxStatus) map[string]string {
	return map[string]string{LabelManaged: "true", LabelGroup: st.GroupID, LabelSandbox: st.ID}
}

func (w *Worker) startSandbox(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	unlock := w.locks.lock("sandbox/" + cmd.SandboxID)
	defer unlock()
	st, _, err := w.store.sandbox(ctx, cmd.SandboxID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if st.GroupID != cmd.GroupID {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeNotFound, "sandbox %q is not in group %q", cmd.SandboxID, cmd.GroupID)
	}
	if st.State == schemas.StateRunning {
		return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, nil
	}
	st, err = w.doStartSandbox(ctx, st, cmd.ID)
	return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, err
}

// doStartSandbox starts the container and waits until its executor answers.
func (w *Worker) doStartSandbox(ctx context.Context, st schemas.SandboxStatus, cmdID string) (schemas.SandboxStatus, error) {
	if err := w.rt.Start(ctx, st.Container); err != nil {
		return st, fmt.Errorf("sandbox %s: %w", st.ID, err)
	}
	if err := w.waitReady(ctx, st); err != nil {
		st.State, st.Reason = schemas.StateFailed, err.Error()
		_ = w.store.putSandbox(ctx, &st)
		w.publishEvent(schemas.Event{Kind: schemas.EventStateChanged, GroupID: st.GroupID, SandboxID: st.ID, CommandID: cmdID, Message: st.Reason, Sandbox: &st})
		return st, err
	}
	st.State, st.Reason = schemas.StateRunning, ""
	if err := w.store.putSandbox(ctx, &st); err != nil {
		return st, err
	}
	w.publishEvent(schemas.Event{Kind: schemas.EventStateChanged, GroupID: st.GroupID, SandboxID: st.ID, CommandID: cmdID, Message: "running", Sandbox: &st})
	return st, nil
}

func (w *Worker) endSandbox(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	unlock := w.locks.lock("sandbox/" + cmd.SandboxID)
	defer unlock()
	st, _, err := w.store.sandbox(ctx, cmd.SandboxID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if st.GroupID != cmd.GroupID {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeNotFound, "sandbox %q is not in group %q", cmd.SandboxID, cmd.GroupID)
	}
	st, err = w.doEndSandbox(ctx, cmd.SandboxID, cmd.ID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if _, err := w.store.updateGroup(ctx, st.GroupID, func(g *schemas.GroupStatus) error {
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
	st, err := w.store.updateSandbox(ctx, id, func(st *schemas.SandboxStatus) error {
		st.State = schemas.StateEnding
		return nil
	})
	if err != nil {
		return st, err
	}
	container := st.Container
	if container == "" {
		container = ContainerName(id)
	}
	if err := w.removeSandboxResources(ctx, container, id); err != nil {
		return st, err
	}
	if err := w.store.deleteSandbox(ctx, id); err != nil {
		return st, err
	}
	st.State, st.Container = schemas.StateEnded, ""
	w.publishEvent(schemas.Event{Kind: schemas.EventStateChanged, GroupID: st.GroupID, SandboxID: id, CommandID: cmdID, Message: "ended", Sandbox: &st})
	return st, nil
}

// removeSandboxResources revokes a sandbox's identity, removes its
// container, then its volume and disk, and releases its resources.
func (w *Worker) removeSandboxResources(ctx context.Context, container, sandboxID string) error {
	// First the identity, so that the sandbox is off the bus at once.
	if err := w.revokeIdentity(ctx, sandboxID); err != nil {
		return err
	}
	if err := w.egress.Close(sandboxID); err != nil {
		return err
	}
	if err := w.rt.Remove(ctx, container); err != nil {
		return err
	}
	if err := w.rt.RemoveVolume(ctx, VolumeName(sandboxID)); err != nil {
		return err
	}
	return errors.Join(w.detachDisk(sandboxID), w.release(ctx, sandboxID))
}

func toolModules(files []schemas.ToolFile) []string {
	out := []string{"filesystem_tools", "terminal_tools"}
	for _, f := range files {
		m := strings.TrimSuffix(f.Name, ".py")
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}
