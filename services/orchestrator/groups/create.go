package groups

import (
	"context"
	"errors"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/egressnet"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/lifetime"
	"github.com/sandox/sandox/services/orchestrator/locks"
	"github.com/sandox/sandox/services/orchestrator/pool"
)

// CreateSandbox creates sandbox cmd.SandboxID of group cmd.GroupID on
// this worker's host: from the warm pool when a pooled sandbox fits, else
// made with its image, which is found or built before the group's lock is
// taken (a build can take minutes, and the group's other commands would
// wait behind it). A create forwarded to this host (forwarded) does not
// take the group's lock: the group command that may have sent it holds
// that lock on its own host while it waits, and two such commands waiting
// on each other's hosts would never finish. It relies on compare-and-set,
// as any two workers do.
func (s *Service) CreateSandbox(ctx context.Context, cmd schemas.Command, forwarded bool) (schemas.CommandResult, error) {
	if cmd.Sandbox == nil {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeBadRequest, "create_sandbox without a sandbox spec")
	}
	spec := *cmd.Sandbox
	spec.ID = cmd.SandboxID
	if schemas.IsPoolID(spec.ID) {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeBadRequest, "sandbox id %q: ids that begin with %q are the warm pool's", spec.ID, schemas.PoolIDPrefix)
	}
	// The warm pool first, so that a claim (tens of milliseconds) asks the
	// engine for no image.
	if res, ok, err := s.createLocked(ctx, cmd, spec, forwarded, nil); ok || err != nil {
		return res, err
	}
	// A group's spec does not change once it is created, so the group read
	// without its lock builds the image that Make would.
	g, _, err := s.store.Group(ctx, cmd.GroupID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	img, err := s.sandboxes.BuildImage(ctx, g, spec)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	res, _, err := s.createLocked(ctx, cmd, spec, forwarded, &img)
	return res, err
}

// createLocked takes the group's lock (unless forwarded) and the
// sandbox's, reads the group again (it may have ended meanwhile), and
// claims a pooled sandbox that fits. Failing that it makes the sandbox
// with img, or, when img is nil, reports that it created nothing (ok
// false, no error).
func (s *Service) createLocked(ctx context.Context, cmd schemas.Command, spec schemas.SandboxSpec, forwarded bool, img *images.Resolved) (_ schemas.CommandResult, ok bool, _ error) {
	if !forwarded {
		unlock := s.locks.Lock(locks.Group(cmd.GroupID))
		defer unlock()
	}
	g, _, err := s.store.Group(ctx, cmd.GroupID)
	if err != nil {
		return schemas.CommandResult{}, false, err
	}
	unlockSandbox := s.locks.Lock(locks.Sandbox(spec.ID))
	defer unlockSandbox()
	// A fork gets its files before it starts, and the executor of a group
	// with automatic checkpoints watches its workspace: neither comes from
	// the warm pool, whose sandboxes run already.
	if spec.FromCheckpoint == nil && (g.Spec.Checkpoints == nil || !g.Spec.Checkpoints.Auto) {
		if st, ok, err := s.pools.Claim(ctx, g, spec, cmd.ID); ok {
			if err != nil {
				return schemas.CommandResult{}, false, err
			}
			return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, true, nil
		}
	}
	if img == nil {
		return schemas.CommandResult{}, false, nil
	}
	st, err := s.sandboxes.MakeWithImage(ctx, g, spec, cmd.ID, img)
	if err != nil {
		return schemas.CommandResult{}, false, err
	}
	return schemas.CommandResult{Sandboxes: []schemas.SandboxStatus{st}}, true, nil
}

// CreateGroup runs create_group: it checks the whole spec
// (checkGroupSpec), records the group, refused with CodeAlreadyExists
// when its id is taken, and wakes the pools, which may keep sandboxes for
// it.
func (s *Service) CreateGroup(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	if cmd.Group == nil {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeBadRequest, "create_group without a group spec")
	}
	spec := *cmd.Group
	spec.ID = cmd.GroupID
	if err := s.checkGroupSpec(spec); err != nil {
		return schemas.CommandResult{}, err
	}
	g := schemas.GroupStatus{ID: spec.ID, State: schemas.GroupCreated, Spec: spec, Sandboxes: []string{}, CreatedAt: time.Now().UTC()}
	if spec.TTLSeconds > 0 {
		g.ExpiresAt = g.CreatedAt.Add(lifetime.Seconds(spec.TTLSeconds))
	}
	if err := s.store.CreateGroup(ctx, &g); err != nil {
		return schemas.CommandResult{}, err
	}
	s.pools.Wake()
	return schemas.CommandResult{Group: &g}, nil
}

// checkGroupSpec validates everything in a group spec that can be checked
// before any sandbox exists, so that a bad spec is refused whole.
func (s *Service) checkGroupSpec(spec schemas.GroupSpec) error {
	if err := schemas.ValidateID("group", spec.ID); err != nil {
		return err
	}
	var errs []error
	errs = append(errs, images.CheckTools(spec.Tools, spec.Families, s.cfg.MaxToolFileBytes))
	if _, err := resources.Parse(spec.Compute); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, spec.DatabaseAccess.Validate(), pool.CheckSpec(spec.Pool))
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
		errs = append(errs, images.CheckTools(sb.Tools, sb.Families, s.cfg.MaxToolFileBytes))
		if _, err := resources.Parse(resources.Merge(spec.Compute, sb.Compute)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return schemas.Errorf(schemas.CodeBadRequest, "group %s: %w", spec.ID, err)
	}
	return nil
}
