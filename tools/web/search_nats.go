package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// RequestFunc sends a request on a NATS subject and returns the reply's
// data; tools.Env.Request is one.
type RequestFunc func(ctx context.Context, subject string, data []byte) ([]byte, error)

// NATSSearcher forwards search requests over NATS to the control plane's
// search service on the sandbox's schemas.SandboxSearchSubject. It is safe
// for concurrent use.
type NATSSearcher struct {
	subject string
	request RequestFunc
}

// NewNATSSearcher returns a Searcher that asks the search service through
// nc for sandbox sandboxID.
func NewNATSSearcher(sandboxID string, nc *nats.Conn) *NATSSearcher {
	return NewRequestSearcher(sandboxID, func(ctx context.Context, subject string, data []byte) ([]byte, error) {
		m, err := nc.RequestWithContext(ctx, subject, data)
		if err != nil {
			return nil, err
		}
		return m.Data, nil
	})
}

// NewRequestSearcher returns a Searcher that asks the search service for
// sandbox sandboxID with request, such as the executor's tools.Env.Request.
func NewRequestSearcher(sandboxID string, request RequestFunc) *NATSSearcher {
	return &NATSSearcher{subject: schemas.SandboxSearchSubject(sandboxID), request: request}
}

// Search sends req and waits for the answer until ctx ends (30 s when ctx
// has no deadline). No search service listening is ErrNoSearch.
func (s *NATSSearcher) Search(ctx context.Context, req schemas.SearchRequest) (schemas.SearchResponse, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	data, err := json.Marshal(req)
	if err != nil {
		return schemas.SearchResponse{}, fmt.Errorf("encode search request: %w", err)
	}
	reply, err := s.request(ctx, s.subject, data)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return schemas.SearchResponse{}, fmt.Errorf("%w: nothing serves %s (is the search service running?)", ErrNoSearch, s.subject)
	case err != nil:
		return schemas.SearchResponse{}, fmt.Errorf("ask the search service: %w", err)
	}
	var resp schemas.SearchResponse
	if err := json.Unmarshal(reply, &resp); err != nil {
		return schemas.SearchResponse{}, fmt.Errorf("decode search response: %w", err)
	}
	return resp, nil
}
