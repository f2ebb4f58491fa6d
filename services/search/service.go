package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/metrics/report"
)

// QueueGroup is the NATS queue group of the search service, so several
// instances share the requests.
const QueueGroup = "sandox-search"

// maxInFlight bounds the provider calls one instance runs at once.
const maxInFlight = 16

// Service answers search requests with the configured providers. It is
// safe for concurrent use.
type Service struct {
	cfg       Config
	providers map[string]Provider
	def       string
	quota     *limiters
	meas      *measures
	log       *slog.Logger
}

// New returns a Service on cfg.
func New(cfg Config, log *slog.Logger) *Service {
	if cfg.DefaultCount <= 0 {
		cfg.DefaultCount = DefaultConfig().DefaultCount
	}
	if cfg.MaxCount <= 0 {
		cfg.MaxCount = DefaultConfig().MaxCount
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultConfig().Timeout
	}
	ps, def := cfg.providers()
	return &Service{cfg: cfg, providers: ps, def: def, quota: newLimiters(cfg.Quota, time.Now), meas: newMeasures(), log: log}
}

// Search answers one request. Errors come back in the response as wire
// errors: bad_request for an empty query or an unknown provider,
// unavailable for a provider that is not configured or failed, timeout when
// it did not answer in time.
func (s *Service) Search(ctx context.Context, req schemas.SearchRequest) schemas.SearchResponse {
	name := req.Provider
	if name == "" {
		name = s.def
	}
	resp := schemas.SearchResponse{Provider: name, Results: []schemas.SearchResult{}}
	query := strings.TrimSpace(req.Query)
	p, ok := s.providers[name]
	switch {
	case query == "":
		resp.Error = schemas.Errorf(schemas.CodeBadRequest, "the query is empty")
		return resp
	case !ok:
		resp.Error = schemas.Errorf(schemas.CodeBadRequest, "%v %q: want brave, google or searxng", ErrUnknownProvider, name)
		return resp
	}
	count := req.Count
	if count <= 0 {
		count = s.cfg.DefaultCount
	}
	count = min(count, s.cfg.MaxCount)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	results, err := p.Search(ctx, query, count)
	if err != nil {
		resp.Error = wireError(err)
		return resp
	}
	resp.Results = append(resp.Results, results...)
	return resp
}

// wireError is a provider's error as the service answers it: timeout when
// the provider did not answer in time, unavailable otherwise (not
// configured, refused, unreachable).
func wireError(err error) *schemas.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return schemas.Errorf(schemas.CodeTimeout, "%w", err)
	}
	return schemas.Errorf(schemas.CodeUnavailable, "%w", err)
}

// Serve answers requests on schemas.SearchSubjects (queue group
// QueueGroup), and the metrics exporter's requests for the service's own
// metrics (schemas.ServiceMetricsSubject), until ctx ends, then drains the subscription and waits for
// the requests in flight. It blocks. The last token of a request's subject
// names the sandbox that sent it (its identity may publish on its own
// subject only), and each sandbox's requests are bounded by cfg.Quota.
func (s *Service) Serve(ctx context.Context, nc *nats.Conn) error {
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxInFlight)
	sub, err := nc.QueueSubscribe(schemas.SearchSubjects, QueueGroup, func(m *nats.Msg) {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			s.answer(ctx, m)
		}()
	})
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", schemas.SearchSubjects, err)
	}
	msub, err := report.Answer(nc, Name, report.Instance(), s.meas.reg)
	if err != nil {
		_ = sub.Unsubscribe()
		return err
	}
	s.log.Info("search service ready", "subject", schemas.SearchSubjects, "default", s.def,
		"quota_per_minute", s.cfg.Quota.PerMinute, "quota_burst", s.cfg.Quota.Burst)
	<-ctx.Done()
	err = sub.Drain()
	_ = msub.Unsubscribe()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("drain %s: %w", schemas.SearchSubjects, err)
	}
	return nil
}

func (s *Service) answer(ctx context.Context, m *nats.Msg) {
	start := time.Now()
	var req schemas.SearchRequest
	var resp schemas.SearchResponse
	sandbox := strings.TrimPrefix(m.Subject, schemas.SearchSubject+".")
	if err := json.Unmarshal(m.Data, &req); err != nil {
		resp.Error = schemas.Errorf(schemas.CodeBadRequest, "decode search request: %w", err)
	} else if ok, wait := s.quota.take(sandbox); !ok {
		resp.Provider = req.Provider
		resp.Error = schemas.Errorf(schemas.CodeResourceExhausted,
			"%w: sandbox %s may search %g times a minute (%d at once); try again in %s",
			ErrQuota, sandbox, s.cfg.Quota.PerMinute, max(s.cfg.Quota.Burst, 1), wait.Round(100*time.Millisecond))
	} else {
		resp = s.Search(ctx, req)
	}
	s.measure(resp, time.Since(start))
	data, err := json.Marshal(resp)
	if err == nil {
		err = m.Respond(data)
	}
	if err != nil {
		s.log.Warn("answer search request", "err", err)
		return
	}
	s.log.Info("search", "sandbox", sandbox, "provider", resp.Provider, "results", len(resp.Results), "error", resp.Error)
}
