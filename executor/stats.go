package executor

import (
	"errors"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/executor/limits"
	"github.com/sandox/sandox/schemas"
)

// serveStats answers with a schemas.SandboxUsage holding the workspace's
// disk use (only that: the orchestrator reads the rest from the container
// runtime). Without a disk limit the figure comes from walking the
// workspace, and for a workspace too large to walk in time it is a lower
// bound. It answers with a *schemas.Error when disk use is not watched
// (CodeUnsupported) or cannot be read (CodeInternal).
func (s *Server) serveStats(m *nats.Msg) {
	if s.cfg.Limits == nil {
		s.respondJSON(m, schemas.Errorf(schemas.CodeUnsupported, "sandbox %s: disk usage is not watched", s.cfg.SandboxID))
		return
	}
	used, err := s.cfg.Limits.Usage()
	if err != nil && !errors.Is(err, limits.ErrPartial) {
		s.respondJSON(m, schemas.Errorf(schemas.CodeInternal, "sandbox %s: %w", s.cfg.SandboxID, err))
		return
	}
	if err != nil {
		s.log.Debug("disk use is a lower bound", "err", err)
	}
	s.respondJSON(m, schemas.SandboxUsage{
		SandboxID: s.cfg.SandboxID,
		DiskBytes: used,
		ReadAt:    time.Now().UTC(),
	})
}
