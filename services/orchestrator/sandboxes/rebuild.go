package sandboxes

import (
	"context"
	"errors"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// containerHolders lists the sandboxes of this worker's system that have a
// container on the engine. Without a system name it lists none: the
// engine's containers could be another sandox system's.
func (s *Service) containerHolders(ctx context.Context) ([]string, error) {
	if s.cfg.System == "" {
		return nil, nil
	}
	cs, err := s.rt.List(ctx, s.OwnLabels(runtime.LabelManaged+"=true")...)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		if id := c.Labels[runtime.LabelSandbox]; id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// releaseStaleContainer removes the container of a sandbox that has no
// record, and its workspace volume, with every other resource a sandbox
// may hold (each tolerates being absent).
func (s *Service) releaseStaleContainer(ctx context.Context, sandboxID string) error {
	return s.RemoveResources(ctx, runtime.ContainerName(sandboxID), sandboxID)
}

// MarkMissing marks lost (reason container_missing), with an exited event,
// every sandbox of this worker's host whose container the engine no
// longer has (removed by hand, or an engine whose data was lost). A record
// without a container id is being created and is left alone, as is one
// being ended; the sandboxes of other hosts are theirs to check. It runs
// at start, after reconcile.
func (s *Service) MarkMissing(ctx context.Context) {
	ids, err := s.store.SandboxIDs(ctx)
	if err != nil {
		s.log.Warn("list sandboxes to check for lost containers", "err", err)
		return
	}
	for _, id := range ids {
		st, _, err := s.store.Sandbox(ctx, id)
		if err != nil || st.Container == "" || !s.here(st.Host) {
			continue
		}
		if _, err := s.rt.Inspect(ctx, st.Container); !errors.Is(err, runtime.ErrNotFound) {
			continue
		}
		s.MarkLost(ctx, id, st.Container, schemas.LostContainerMissing, "its container no longer exists on the engine of host "+s.cfg.Host)
	}
}
