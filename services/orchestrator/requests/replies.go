package requests

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// sandboxStatus answers SandboxStatusSubject with the recorded status.
func (s *Server) sandboxStatus(ctx context.Context, id string) schemas.StatusReply {
	st, _, err := s.store.Sandbox(ctx, id)
	if err != nil {
		return schemas.StatusReply{Error: wire.Error(err)}
	}
	return schemas.StatusReply{Sandbox: &st}
}

// groupStatus answers GroupStatusSubject with the group's recorded status
// and those of its sandboxes that are still recorded, and counts them per
// host (GroupStatus.Hosts).
func (s *Server) groupStatus(ctx context.Context, id string) schemas.StatusReply {
	g, _, err := s.store.Group(ctx, id)
	if err != nil {
		return schemas.StatusReply{Error: wire.Error(err)}
	}
	reply := schemas.StatusReply{Group: &g}
	for _, sb := range g.Sandboxes {
		st, _, err := s.store.Sandbox(ctx, sb)
		if err != nil {
			if wire.Error(err).Code == schemas.CodeNotFound {
				continue
			}
			return schemas.StatusReply{Error: wire.Error(err)}
		}
		reply.Sandboxes = append(reply.Sandboxes, st)
		if g.Hosts == nil {
			g.Hosts = map[string]int{}
		}
		host := st.Host
		if host == "" {
			host = s.cfg.Host // a record from before placement: the single host's
		}
		g.Hosts[host]++
	}
	return reply
}

// sandboxStats answers SandboxStatsSubject with a live reading of the
// sandbox's use against its limits: here, or relayed from the workers of
// the live host it runs on.
func (s *Server) sandboxStats(ctx context.Context, id string) schemas.StatusReply {
	if st, _, err := s.store.Sandbox(ctx, id); err == nil && !s.hosts.Here(st.Host) && st.State != schemas.StateLost && s.hosts.Live(ctx, st.Host) {
		m, err := s.nc.RequestWithContext(ctx, schemas.HostStatsSubject(st.Host, id), nil)
		if err != nil {
			return schemas.StatusReply{Error: schemas.Errorf(schemas.CodeUnavailable, "sandbox %s: host %s did not answer: %v", id, st.Host, err)}
		}
		var reply schemas.StatusReply
		if err := json.Unmarshal(m.Data, &reply); err != nil {
			return schemas.StatusReply{Error: wire.Error(fmt.Errorf("sandbox %s: stats from host %s: %w", id, st.Host, err))}
		}
		return reply
	}
	return s.localStats(ctx, id)
}

// localStats answers a stats request for a sandbox of this host.
func (s *Server) localStats(ctx context.Context, id string) schemas.StatusReply {
	res, err := s.stats.Stats(ctx, schemas.Command{SandboxID: id})
	if err != nil {
		return schemas.StatusReply{Error: wire.Error(err)}
	}
	reply := schemas.StatusReply{Stats: res.Stats}
	if len(res.Sandboxes) == 1 {
		reply.Sandbox = &res.Sandboxes[0]
	}
	return reply
}
