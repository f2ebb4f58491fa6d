package sandboxes

import (
	"context"
	"errors"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// redeliveredCreate decides what a create whose sandbox id is taken
// (taken, CodeAlreadyExists) does when the record was made by this same
// command: the worker that ran it died before it answered, and the work
// queue delivered the command again.
//
//   - The first attempt finished (the record has its container): the
//     create answers with the record, as the first attempt would have.
//   - The first attempt stopped half-way on this host (no container
//     recorded): what it made is removed, the record too, and the caller
//     makes the sandbox again (done is false).
//   - Anything else (another command's sandbox, another host's half-made
//     one): the create answers taken.
func (s *Service) redeliveredCreate(ctx context.Context, g schemas.GroupStatus, id, cmdID string, taken error) (_ schemas.SandboxStatus, done bool, _ error) {
	if cmdID == "" || !errors.Is(taken, schemas.CodeAlreadyExists) {
		return schemas.SandboxStatus{}, true, taken
	}
	prev, _, err := s.store.Sandbox(ctx, id)
	if err != nil || prev.CreatedBy != cmdID || prev.GroupID != g.ID {
		return schemas.SandboxStatus{}, true, taken
	}
	if prev.Container != "" {
		s.log.Info("a redelivered create found its sandbox made", "sandbox", id, "command", cmdID)
		if err := s.store.JoinGroup(ctx, g.ID, id); err != nil {
			return schemas.SandboxStatus{}, true, err
		}
		return prev, true, nil
	}
	if prev.Host != s.cfg.Host {
		return schemas.SandboxStatus{}, true, taken
	}
	s.log.Warn("a redelivered create found its sandbox half-made: removing it to make it again", "sandbox", id, "command", cmdID)
	if err := s.RemoveResources(ctx, runtime.ContainerName(id), id); err != nil {
		// What the first attempt did not make is not there to remove.
		s.log.Info("removing a half-made sandbox", "sandbox", id, "err", err)
	}
	if err := s.store.DeleteSandbox(ctx, id); err != nil {
		return schemas.SandboxStatus{}, true, err
	}
	return schemas.SandboxStatus{}, false, nil
}
