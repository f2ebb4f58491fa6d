package orchestrator

import (
	"context"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
)

// resolveResources parses a sandbox's compute resources and resolves them
// against the engine's host.
func (w *Worker) resolveResources(ctx context.Context, c schemas.ComputeResources) (schemas.ResolvedResources, error) {
	req, err := resources.Parse(c)
	if err != nil {
		return schemas.ResolvedResources{}, err
	}
	host, err := w.host(ctx)
	if err != nil {
		return schemas.ResolvedResources{}, err
	}
	r, err := resources.Resolve(req, host)
	if err != nil {
		return r, err
	}
	if r.PIDs == 0 {
		r.PIDs = w.cfg.DefaultPIDs
	}
	return r, nil
}

// host measures the machine the engine runs sandboxes on.
func (w *Worker) host(ctx context.Context) (resources.Host, error) {
	h, err := w.rt.Host(ctx)
	if err != nil {
		return resources.Host{}, err
	}
	return resources.Host{CPUs: h.CPUs, MemoryBytes: h.MemoryBytes}, nil
}

// sandboxStats reads a sandbox's live use against its limits.
func (w *Worker) sandboxStats(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	st, _, err := w.store.sandbox(ctx, cmd.SandboxID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if st.State != schemas.StateRunning {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeConflict, "sandbox %q is %s, not running", st.ID, st.State)
	}
	u, err := w.rt.Stats(ctx, st.Container)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	u.SandboxID, u.Limits = st.ID, st.Resources
	return schemas.CommandResult{Stats: &u, Sandboxes: []schemas.SandboxStatus{st}}, nil
}
