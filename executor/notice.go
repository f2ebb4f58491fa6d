package executor

import (
	"encoding/json"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// serveNotice takes a schemas.LimitHit from the orchestrator and queues it
// for the first observation of the next batch; it answers "ok", or a
// *schemas.Error: CodeBadRequest for a notice that is not a valid LimitHit,
// CodeUnsupported when limits are not watched.
func (s *Server) serveNotice(m *nats.Msg) {
	if s.cfg.Limits == nil {
		s.respondJSON(m, schemas.Errorf(schemas.CodeUnsupported, "sandbox %s: limits are not watched", s.cfg.SandboxID))
		return
	}
	var h schemas.LimitHit
	if err := json.Unmarshal(m.Data, &h); err != nil {
		s.respondJSON(m, schemas.Errorf(schemas.CodeBadRequest, "limit notice: %w", err))
		return
	}
	if e := checkNotice(h); e != nil {
		s.respondJSON(m, e)
		return
	}
	s.cfg.Limits.Notify(h)
	_ = m.Respond([]byte("ok"))
}

func checkNotice(h schemas.LimitHit) *schemas.Error {
	resources := []string{schemas.LimitMemory, schemas.LimitPIDs, schemas.LimitDisk}
	switch {
	case !slices.Contains(resources, h.Resource):
		return schemas.Errorf(schemas.CodeBadRequest, "limit notice: resource %q: want one of %v", h.Resource, resources)
	case h.Count < 0:
		return schemas.Errorf(schemas.CodeBadRequest, "limit notice: count %d: want 0 or more", h.Count)
	case h.Message == "":
		return schemas.Errorf(schemas.CodeBadRequest, "limit notice: no message")
	}
	return nil
}
