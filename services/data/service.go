package data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/internal/egress"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/metrics/report"
)

// Name is the data service's name where it answers for its own metrics
// (schemas.HeaderService).
const Name = "data"

// maxInFlight caps the requests answered at once.
const maxInFlight = 32

// Config configures the Service.
type Config struct {
	// Neo4jPassword is the password of the neo4j user of every group's
	// Neo4j (the orchestrator mounts the same secret into them).
	Neo4jPassword string
	// Endpoints, by database, are used for a group that has no endpoint
	// of its own recorded: databases shared by every group (compose.yaml's)
	// or a test's.
	Endpoints map[string]string
	// PopulateDir is where relative local paths of population sources
	// resolve.
	PopulateDir string
	// PopulateAllow lists the hosts that http(s) and s3 population sources
	// may reach, in the egress allowlist's forms (example.com,
	// *.example.com, an IP address, a CIDR; SANDOX_POPULATE_ALLOW). Empty
	// refuses every URL source: a group's config must not make the control
	// plane fetch whatever address it names.
	PopulateAllow []string
	// Embedder makes the dense vectors of documents and queries;
	// HashEmbedder when nil.
	Embedder Embedder
}

// Service answers database requests. It is safe for concurrent use.
type Service struct {
	cfg   Config
	log   *slog.Logger
	rec   records
	allow egress.Allowlist // of URL population sources
	meas  *measures

	mu      sync.Mutex
	graphs  *clients[*Graph]
	vectors *clients[*Vectors]
}

// New returns a service that reads the orchestrator's records through js.
func New(ctx context.Context, js jetstream.JetStream, cfg Config, log *slog.Logger) (*Service, error) {
	rec, err := openRecords(ctx, js)
	if err != nil {
		return nil, err
	}
	if cfg.Embedder == nil {
		cfg.Embedder = HashEmbedder{}
	}
	allow, err := parsePopulateAllow(cfg.PopulateAllow)
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, log: log, rec: rec, allow: allow, meas: newMeasures()}
	s.graphs = newClients(func(ctx context.Context, addr string) (*Graph, error) {
		return OpenGraph(ctx, addr, cfg.Neo4jPassword)
	}, func(g *Graph) { _ = g.Close(context.Background()) })
	s.vectors = newClients(func(ctx context.Context, addr string) (*Vectors, error) {
		return OpenVectors(ctx, addr, cfg.Embedder)
	}, func(v *Vectors) { _ = v.Close() })
	return s, nil
}

// Serve answers requests on schemas.DatabaseSubjectPrefix+">" (queue group
// schemas.DataQueue), and the metrics exporter's requests for the
// service's own metrics (schemas.ServiceMetricsSubject), until ctx ends,
// then drains and closes the database clients. It blocks.
func (s *Service) Serve(ctx context.Context, nc *nats.Conn) error {
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxInFlight)
	subject := schemas.DatabaseSubjectPrefix + ">"
	sub, err := nc.QueueSubscribe(subject, schemas.DataQueue, func(m *nats.Msg) {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			s.answer(ctx, m)
		}()
	})
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", subject, err)
	}
	psub, err := nc.QueueSubscribe(schemas.PopulateSubject, schemas.DataQueue, func(m *nats.Msg) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.answerPopulate(ctx, nc, m)
		}()
	})
	if err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("subscribe %s: %w", schemas.PopulateSubject, err)
	}
	msub, err := report.Answer(nc, Name, report.Instance(), s.meas.reg)
	if err != nil {
		_ = sub.Unsubscribe()
		_ = psub.Unsubscribe()
		return err
	}
	s.log.Info("data service ready", "subject", subject)
	<-ctx.Done()
	err = sub.Drain()
	_ = psub.Drain()
	_ = msub.Unsubscribe()
	wg.Wait()
	s.close()
	if err != nil {
		return fmt.Errorf("drain %s: %w", subject, err)
	}
	return nil
}

func (s *Service) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.graphs.closeAll()
	s.vectors.closeAll()
}

func (s *Service) answer(ctx context.Context, m *nats.Msg) {
	reply := s.Handle(ctx, m.Subject, m.Data)
	data, err := json.Marshal(reply)
	if err == nil {
		err = m.Respond(data)
	}
	if err != nil {
		s.log.Warn("answer database request", "subject", m.Subject, "err", err)
	}
}

// Handle answers one request received on subject. The subject alone says
// who asks and for what access; the payload only says what to do. The
// service's metrics count it.
func (s *Service) Handle(ctx context.Context, subject string, payload []byte) schemas.DatabaseReply {
	start := time.Now()
	reply := s.handle(ctx, subject, payload)
	s.meas.request(subject, payload, reply, time.Since(start))
	return reply
}

func (s *Service) handle(ctx context.Context, subject string, payload []byte) schemas.DatabaseReply {
	call, err := schemas.ParseDatabaseSubject(subject)
	if err != nil {
		return fail(err)
	}
	sb, err := s.rec.sandbox(ctx, call.SandboxID)
	if err != nil {
		return fail(err)
	}
	if sb.State != schemas.StateRunning && sb.State != schemas.StateCreated {
		return fail(schemas.Errorf(schemas.CodeAccessDenied, "access denied: sandbox %s is %s", sb.ID, sb.State))
	}
	if call.Op == "" {
		return schemas.DatabaseReply{Grants: sb.Databases}
	}
	if !sb.Databases.Allows(call.Database, call.Namespace, call.Op) {
		s.log.Warn("database access denied", "sandbox", sb.ID, "database", call.Database, "namespace", call.Namespace, "op", call.Op)
		return fail(schemas.Errorf(schemas.CodeAccessDenied, "access denied: sandbox %s may not %s namespace %q of %s", sb.ID, call.Op, call.Namespace, call.Database))
	}
	var req schemas.DatabaseRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		return fail(schemas.Errorf(schemas.CodeBadRequest, "decode database request: %w", err))
	}
	addr, err := s.endpoint(ctx, sb.GroupID, call.Database)
	if err != nil {
		return fail(err)
	}
	var result any
	switch call.Database {
	case schemas.DatabaseNeo4j:
		result, err = s.graph(ctx, sb.GroupID, addr, call, req)
	case schemas.DatabaseQdrant:
		result, err = s.vector(ctx, sb.GroupID, addr, call, req)
	default:
		err = schemas.Errorf(schemas.CodeUnsupported, "database %q", call.Database)
	}
	if err != nil {
		return fail(err)
	}
	data, err := json.Marshal(result)
	if err != nil {
		return fail(schemas.Errorf(schemas.CodeInternal, "encode result: %w", err))
	}
	return schemas.DatabaseReply{Result: data}
}

// endpoint is where the group's database listens.
func (s *Service) endpoint(ctx context.Context, groupID, database string) (string, error) {
	g, err := s.rec.group(ctx, groupID)
	if err != nil && !errors.Is(err, schemas.CodeNotFound) {
		return "", err
	}
	for _, e := range g.Databases {
		if e.Database == database {
			return e.Address, nil
		}
	}
	if a := s.cfg.Endpoints[database]; a != "" {
		return a, nil
	}
	return "", schemas.Errorf(schemas.CodeUnavailable, "group %s has no %s database", groupID, database)
}

// graphAt returns the client of group's Neo4j at addr, connecting once.
func (s *Service) graphAt(ctx context.Context, group, addr string) (*Graph, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.graphs.get(ctx, group, addr)
	if err != nil {
		return nil, schemas.Errorf(schemas.CodeUnavailable, "%w", err)
	}
	return g, nil
}

func (s *Service) graph(ctx context.Context, group, addr string, call schemas.DatabaseCall, req schemas.DatabaseRequest) (any, error) {
	g, err := s.graphAt(ctx, group, addr)
	if err != nil {
		return nil, err
	}
	write := req.Op != schemas.GraphReadQuery && req.Op != schemas.GraphNeighbours && req.Op != schemas.GraphShortestPath
	if write && call.Op != schemas.DatabaseWrite {
		return nil, schemas.Errorf(schemas.CodeAccessDenied, "access denied: %s writes; send it on the namespace's write subject", req.Op)
	}
	ns := call.Namespace
	switch req.Op {
	case schemas.GraphReadQuery, schemas.GraphWriteQuery:
		var a schemas.GraphQueryArgs
		if err := decode(req, &a); err != nil {
			return nil, err
		}
		return wrap(g.Query(ctx, ns, a, req.Op == schemas.GraphWriteQuery))
	case schemas.GraphAddNode:
		var a schemas.GraphNodeArgs
		if err := decode(req, &a); err != nil {
			return nil, err
		}
		return wrap(g.AddNode(ctx, ns, a))
	case schemas.GraphAddRelationship:
		var a schemas.GraphRelationshipArgs
		if err := decode(req, &a); err != nil {
			return nil, err
		}
		return wrap(g.AddRelationship(ctx, ns, a))
	case schemas.GraphNeighbours:
		var a schemas.GraphNeighboursArgs
		if err := decode(req, &a); err != nil {
			return nil, err
		}
		return wrap(g.Neighbours(ctx, ns, a))
	case schemas.GraphShortestPath:
		var a schemas.GraphPathArgs
		if err := decode(req, &a); err != nil {
			return nil, err
		}
		return wrap(g.ShortestPath(ctx, ns, a))
	}
	return nil, schemas.Errorf(schemas.CodeBadRequest, "unknown graph operation %q", req.Op)
}

// vectorsAt returns the client of group's Qdrant at addr, connecting once.
func (s *Service) vectorsAt(ctx context.Context, group, addr string) (*Vectors, error) {
	s.mu.Lock()
	v, err := s.vectors.get(ctx, group, addr)
	s.mu.Unlock()
	if err != nil {
		return nil, schemas.Errorf(schemas.CodeUnavailable, "%w", err)
	}
	v.wake(ctx) // outside the lock: it may wait a second
	return v, nil
}

func (s *Service) vector(ctx context.Context, group, addr string, call schemas.DatabaseCall, req schemas.DatabaseRequest) (any, error) {
	v, err := s.vectorsAt(ctx, group, addr)
	if err != nil {
		return nil, err
	}
	write := req.Op == schemas.VectorUpsert || req.Op == schemas.VectorDelete
	if write && call.Op != schemas.DatabaseWrite {
		return nil, schemas.Errorf(schemas.CodeAccessDenied, "access denied: %s writes; send it on the namespace's write subject", req.Op)
	}
	ns := call.Namespace
	switch req.Op {
	case schemas.VectorSearch:
		var a schemas.VectorSearchArgs
		if err := decode(req, &a); err != nil {
			return nil, err
		}
		return wrap(v.Search(ctx, ns, a))
	case schemas.VectorGet:
		var a schemas.VectorGetArgs
		if err := decode(req, &a); err != nil {
			return nil, err
		}
		return wrap(v.Get(ctx, ns, a))
	case schemas.VectorUpsert:
		var a schemas.VectorUpsertArgs
		if err := decode(req, &a); err != nil {
			return nil, err
		}
		return wrap(v.Upsert(ctx, ns, a.Documents))
	case schemas.VectorDelete:
		var a schemas.VectorDeleteArgs
		if err := decode(req, &a); err != nil {
			return nil, err
		}
		return wrap(v.Delete(ctx, ns, a))
	}
	return nil, schemas.Errorf(schemas.CodeBadRequest, "unknown vector operation %q", req.Op)
}

func decode(req schemas.DatabaseRequest, v any) error {
	if len(req.Args) == 0 {
		return nil
	}
	if err := json.Unmarshal(req.Args, v); err != nil {
		return schemas.Errorf(schemas.CodeInvalidArgs, "%s arguments: %w", req.Op, err)
	}
	return nil
}

// wrap classifies an operation's error for the wire.
func wrap[T any](v T, err error) (any, error) {
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, ErrCypherRefused):
		return nil, schemas.Errorf(schemas.CodeAccessDenied, "access denied: %w", err)
	case errors.Is(err, ErrGraphArgs), errors.Is(err, ErrVectorArgs):
		return nil, schemas.Errorf(schemas.CodeInvalidArgs, "%w", err)
	case errors.Is(err, context.DeadlineExceeded):
		return nil, schemas.Errorf(schemas.CodeTimeout, "%w", err)
	}
	return nil, schemas.Errorf(schemas.CodeToolError, "%w", err)
}

func fail(err error) schemas.DatabaseReply {
	var e *schemas.Error
	if !errors.As(err, &e) {
		e = schemas.Errorf(schemas.CodeInternal, "%w", err)
	}
	return schemas.DatabaseReply{Error: e}
}
