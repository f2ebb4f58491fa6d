package sandboxes

import (
	"context"
	"errors"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/locks"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// MarkLost sets sandbox id lost for reason, with an exited event,
// unless it is ending, ended or lost already, or (when container is not
// "") its record names another container. It reports whether it did.
func (s *Service) MarkLost(ctx context.Context, id, container, reason, detail string) bool {
	marked := false
	st, err := s.store.UpdateSandbox(ctx, id, func(cur *schemas.SandboxStatus) error {
		marked = false // a retry after another worker's write starts afresh
		if container != "" && cur.Container != container {
			return state.ErrUnchanged
		}
		switch cur.State {
		case schemas.StateEnding, schemas.StateEnded, schemas.StateLost:
			return state.ErrUnchanged
		}
		cur.State, cur.Reason, marked = schemas.StateLost, reason, true
		return nil
	})
	if err != nil || !marked {
		return false
	}
	s.log.Warn("sandbox lost", "sandbox", id, "host", st.Host, "reason", reason, "detail", detail)
	s.publish(schemas.Event{Kind: schemas.EventExited, GroupID: st.GroupID, SandboxID: id, Reason: reason, Message: "lost: " + detail, Sandbox: &st})
	return true
}

// RemoveForeign removes, from the worker's engine, the containers (and
// workspace volumes) of its system whose sandbox is now recorded on
// another host: made again elsewhere while this host was lost. Only the
// container and volume go: the identity, the ledger allocation and the
// record are the other host's sandbox's. Without a system name it removes
// none, as reconcile.
func (s *Service) RemoveForeign(ctx context.Context) {
	if s.cfg.System == "" {
		return
	}
	cs, err := s.rt.List(ctx, s.OwnLabels(runtime.LabelManaged+"=true")...)
	if err != nil {
		s.log.Warn("list containers to find those of other hosts' sandboxes", "err", err)
		return
	}
	for _, c := range cs {
		id := c.Labels[runtime.LabelSandbox]
		if id == "" || schemas.IsPoolID(id) {
			continue
		}
		st, _, err := s.store.Sandbox(ctx, id)
		if err != nil || s.here(st.Host) {
			continue
		}
		err = s.rt.Remove(ctx, c.ID)
		if err == nil {
			err = s.rt.RemoveVolume(ctx, runtime.VolumeName(id))
		}
		if err != nil {
			s.log.Warn("remove the container of a sandbox now on another host", "sandbox", id, "host", st.Host, "err", err)
			continue
		}
		s.log.Info("removed the container of a sandbox now on another host", "sandbox", id, "host", st.Host)
	}
}

// CleanLost removes, from the worker's engine, what the sandboxes of its
// host that were marked lost still hold (their containers first). Their
// records stay, lost, until they are ended.
func (s *Service) CleanLost(ctx context.Context) {
	ids, err := s.store.SandboxIDs(ctx)
	if err != nil {
		s.log.Warn("list sandboxes to clean up lost ones", "err", err)
		return
	}
	for _, id := range ids {
		st, _, err := s.store.Sandbox(ctx, id)
		if err != nil || st.State != schemas.StateLost || !s.here(st.Host) {
			continue
		}
		unlock := s.locks.Lock(locks.Sandbox(id))
		container := st.Container
		if container == "" {
			container = runtime.ContainerName(id)
		}
		err = errors.Join(s.RemoveResources(ctx, container, id), s.removeClaimed(ctx, st))
		unlock()
		if err != nil {
			s.log.Warn("remove what a lost sandbox held", "sandbox", id, "err", err)
		}
	}
}
