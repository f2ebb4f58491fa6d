package data

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/data/populate"
)

// Populate loads the group's databases from the population config of its
// recorded spec, publishing a schemas.PopulationEvent on
// schemas.PopulationEventSubject after every batch and source through nc
// (nil: no events), and its progress (sources done of the config's) on
// schemas.ProgressSubject. The service's metrics follow its progress.
func (s *Service) Populate(ctx context.Context, nc *nats.Conn, groupID string) (reply schemas.PopulateReply) {
	g, err := s.rec.group(ctx, groupID)
	if err != nil {
		return schemas.PopulateReply{Error: asWire(err)}
	}
	if g.Spec.PopulationConfig == "" {
		return schemas.PopulateReply{}
	}
	cfg, err := populate.Parse(g.Spec.PopulationConfig)
	if err != nil {
		return schemas.PopulateReply{Error: asWire(err)}
	}
	run := s.meas.population(groupID, cfg)
	defer func() {
		run.end(reply.Error)
		s.publishProgress(nc, run.finished(reply.Error))
	}()
	r := &populate.Runner{GroupID: groupID, Dir: s.cfg.PopulateDir, Dial: s.allow.DialContext, Allow: s.allow.Allows, Log: s.log}
	if _, ok := cfg.Databases[schemas.DatabaseQdrant]; ok {
		addr, err := s.endpoint(ctx, groupID, schemas.DatabaseQdrant)
		if err == nil {
			r.Vectors, err = s.vectorsAt(ctx, groupID, addr)
		}
		if err != nil {
			return schemas.PopulateReply{Error: asWire(err)}
		}
	}
	if _, ok := cfg.Databases[schemas.DatabaseNeo4j]; ok {
		addr, err := s.endpoint(ctx, groupID, schemas.DatabaseNeo4j)
		if err == nil {
			r.Graph, err = s.graphAt(ctx, groupID, addr)
		}
		if err != nil {
			return schemas.PopulateReply{Error: asWire(err)}
		}
	}
	r.Progress = func(ev schemas.PopulationEvent) {
		run.progress(ev)
		if nc != nil {
			data, _ := json.Marshal(ev)
			if err := nc.Publish(schemas.PopulationEventSubject(groupID), data); err != nil {
				s.log.Warn("population event", "group", groupID, "err", err)
			}
		}
		s.publishProgress(nc, run.status(ev))
	}
	out, err := r.Run(ctx, cfg)
	reply = schemas.PopulateReply{Sources: out}
	if err != nil {
		reply.Error = schemas.Errorf(schemas.CodeUnavailable, "populate group %s: %w", groupID, err)
	}
	bad := 0
	for _, ev := range out {
		bad += len(ev.Bad)
	}
	s.log.Info("group populated", "group", groupID, "sources", len(out), "bad_rows", bad, "err", err)
	return reply
}

// publishProgress publishes p on schemas.ProgressSubject through nc (nil:
// nowhere); a failure is logged, the population goes on.
func (s *Service) publishProgress(nc *nats.Conn, p schemas.Progress) {
	if nc == nil {
		return
	}
	data, _ := json.Marshal(p)
	if err := nc.Publish(schemas.ProgressSubject(p.GroupID), data); err != nil {
		s.log.Warn("population progress", "group", p.GroupID, "err", err)
	}
}

func (s *Service) answerPopulate(ctx context.Context, nc *nats.Conn, m *nats.Msg) {
	var req schemas.PopulateRequest
	var reply schemas.PopulateReply
	if err := json.Unmarshal(m.Data, &req); err != nil {
		reply.Error = schemas.Errorf(schemas.CodeBadRequest, "decode populate request: %w", err)
	} else {
		reply = s.Populate(ctx, nc, req.GroupID)
	}
	data, err := json.Marshal(reply)
	if err == nil {
		err = m.Respond(data)
	}
	if err != nil {
		s.log.Warn("answer populate request", "group", req.GroupID, "err", err)
	}
}

func asWire(err error) *schemas.Error {
	var e *schemas.Error
	if errors.As(err, &e) {
		return e
	}
	return schemas.Errorf(schemas.CodeInternal, "%w", err)
}
