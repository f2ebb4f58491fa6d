package sandboxes

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sandox/sandox/internal/disks"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
)

// resolveResources parses a sandbox's compute resources and resolves them
// against the engine's host, which it returns too.
func (s *Service) resolveResources(ctx context.Context, c schemas.ComputeResources) (schemas.ResolvedResources, resources.Host, error) {
	req, err := resources.Parse(c)
	if err != nil {
		return schemas.ResolvedResources{}, resources.Host{}, err
	}
	host, err := s.Host(ctx)
	if err != nil {
		return schemas.ResolvedResources{}, resources.Host{}, err
	}
	r, err := resources.Resolve(req, host)
	if err != nil {
		return r, host, err
	}
	if r.DiskBytes > 0 {
		if err := s.diskSupport(); err != nil {
			return r, host, err
		}
		if r.DiskBytes < disks.MinSize {
			return r, host, schemas.Errorf(schemas.CodeBadRequest, "compute.disk %s is below the minimum of %s: the sandbox's file system needs room for its own metadata",
				resources.FormatBytes(r.DiskBytes), resources.FormatBytes(disks.MinSize))
		}
	}
	return r, host, nil
}

// host measures the machine the engine runs sandboxes on.
func (s *Service) Host(ctx context.Context) (resources.Host, error) {
	h, err := s.rt.Host(ctx)
	if err != nil {
		return resources.Host{}, err
	}
	return resources.Host{CPUs: h.CPUs, MemoryBytes: h.MemoryBytes, DiskBytes: s.diskCapacity()}, nil
}

// Stats reads a sandbox's live use against its limits.
func (s *Service) Stats(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	st, _, err := s.store.Sandbox(ctx, cmd.SandboxID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	if err := s.actable(st); err != nil {
		return schemas.CommandResult{}, err
	}
	if st.State != schemas.StateRunning {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeConflict, "sandbox %q is %s, not running", st.ID, st.State)
	}
	u, err := s.rt.Stats(ctx, st.Container)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	u.SandboxID, u.Limits = st.ID, st.Resources
	disk, err := s.diskUsage(ctx, st.ID)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	u.DiskBytes = disk
	return schemas.CommandResult{Stats: &u, Sandboxes: []schemas.SandboxStatus{st}}, nil
}

// diskUsage asks the sandbox's executor how much of its workspace it uses.
func (s *Service) diskUsage(ctx context.Context, id string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m, err := s.nc.RequestWithContext(ctx, schemas.StatsSubject(id), nil)
	if err != nil {
		return 0, schemas.Errorf(schemas.CodeUnavailable, "sandbox %s did not report its disk use: %w", id, err)
	}
	// The executor answers a SandboxUsage, or a schemas.Error.
	var e schemas.Error
	if err := json.Unmarshal(m.Data, &e); err == nil && e.Code != "" {
		return 0, fmt.Errorf("sandbox %s: disk use: %w", id, &e)
	}
	var reply schemas.SandboxUsage
	if err := json.Unmarshal(m.Data, &reply); err != nil {
		return 0, fmt.Errorf("sandbox %s: decode disk use: %w", id, err)
	}
	return reply.DiskBytes, nil
}
