package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/audit"
)

// overviewData is what the overview page shows.
type overviewData struct {
	Title string
	State State
	Feed  feedData
}

// feedData is a live feed of audit rows: the newest rows, the sequence the
// page follows from, the address of its stream, and why the log cannot be
// read, if it cannot.
type feedData struct {
	Rows  []Row
	After uint64
	URL   string
	Err   error
}

// feedRows is how many rows a page shows of the feed when it opens.
const feedRows = 100

func (s *Server) feedFor(match func(Row) bool, url string) feedData {
	after, err := s.feed.Status()
	return feedData{Rows: s.feed.Recent(match, feedRows), After: after, URL: url, Err: err}
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.readCtx(r.Context())
	defer cancel()
	st, err := s.state(ctx)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.pages.page(w, http.StatusOK, "overview", overviewData{
		Title: "sandox", State: st,
		Feed: s.feedFor(func(Row) bool { return true }, "/live/events"),
	})
}

// groupData is what a group's page shows.
type groupData struct {
	Title      string
	Group      schemas.GroupStatus
	Members    []schemas.SandboxStatus
	Population populationData
	Feed       feedData
}

func (s *Server) group(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if schemas.ValidateID("group", id) != nil {
		s.fail(w, fmt.Errorf("group %q: %w", id, ErrNotFound))
		return
	}
	ctx, cancel := s.readCtx(r.Context())
	defer cancel()
	st, err := s.state(ctx)
	if err != nil {
		s.fail(w, err)
		return
	}
	g, err := st.Group(id)
	if err != nil {
		s.fail(w, err)
		return
	}
	pop, err := audit.Population(ctx, s.js, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.pages.page(w, http.StatusOK, "group", groupData{
		Title: "group " + id, Group: g, Members: st.Members(id),
		Population: populationData{Sources: pop, URL: "/live/groups/" + id + "/population"},
		Feed:       s.feedFor(func(r Row) bool { return r.Group == id }, "/live/events?group="+id),
	})
}

// sandboxData is what a sandbox's page shows. Sandbox is nil when the
// sandbox is no longer recorded (it ended) but has a history.
type sandboxData struct {
	Title   string
	ID      string
	Sandbox *schemas.SandboxStatus
	History History
	// Jobs are the sandbox's jobs (schemas.JobStream), and JobsErr why
	// they cannot be read.
	Jobs    []schemas.JobInfo
	JobsErr error
	// Checkpoints are the sandbox's checkpoints
	// (schemas.CheckpointIndexBucket), and CheckpointsErr why they
	// cannot be read.
	Checkpoints    []schemas.Checkpoint
	CheckpointsErr error
	UsageURL       string
	Feed           feedData
}

func (s *Server) sandbox(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if schemas.ValidateID("sandbox", id) != nil {
		s.fail(w, fmt.Errorf("sandbox %q: %w", id, ErrNotFound))
		return
	}
	ctx, cancel := s.readCtx(r.Context())
	defer cancel()
	st, err := s.state(ctx)
	if err != nil {
		s.fail(w, err)
		return
	}
	d := sandboxData{Title: "sandbox " + id, ID: id}
	if sb, err := st.Sandbox(id); err == nil {
		d.Sandbox = &sb
		d.UsageURL = "/live/sandboxes/" + id + "/usage"
	}
	if d.History, err = readHistory(ctx, s.js, id); err != nil {
		s.fail(w, err)
		return
	}
	if d.Sandbox == nil && len(d.History.Turns) == 0 {
		s.fail(w, fmt.Errorf("sandbox %q: %w: no such sandbox is recorded, and the audit log has nothing about one", id, ErrNotFound))
		return
	}
	d.Jobs, d.JobsErr = readJobs(ctx, s.js, id)
	d.Checkpoints, d.CheckpointsErr = readCheckpoints(ctx, s.js, id)
	d.Feed = feedData{After: d.History.Last, URL: "/live/events?sandbox=" + id}
	_, d.Feed.Err = s.feed.Status()
	s.pages.page(w, http.StatusOK, "sandbox", d)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, fmt.Errorf("page %s: %w", quote(r.URL.Path), ErrNotFound))
}

// state reads the buckets, or says at once that NATS is unreachable.
func (s *Server) state(ctx context.Context) (State, error) {
	if err := s.reachable(); err != nil {
		return State{}, err
	}
	return readState(ctx, s.js)
}

// ErrUnreachable reports that the dashboard's NATS connection is down.
var ErrUnreachable = errors.New("NATS is unreachable")

func (s *Server) reachable() error {
	if s.nc.IsConnected() {
		return nil
	}
	return fmt.Errorf("%w: %s (connection %s; the dashboard keeps trying: is sandox up?)", ErrUnreachable, s.natsURL(), s.nc.Status())
}

// natsURL names the NATS server(s) the dashboard connects to.
func (s *Server) natsURL() string {
	if s.nc.Opts.Url != "" {
		return s.nc.Opts.Url
	}
	return strings.Join(s.nc.Opts.Servers, ", ")
}

// errorData is what the error page shows.
type errorData struct {
	Title   string
	Code    int
	Message string
}

// fail answers with the error page: 404 for what does not exist, 503 when
// NATS is unreachable, 504 when it did not answer in time, 500 otherwise.
func (s *Server) fail(w http.ResponseWriter, err error) {
	d := errorData{Code: http.StatusInternalServerError, Title: "error", Message: err.Error()}
	switch {
	case errors.Is(err, ErrNotFound):
		d.Code, d.Title = http.StatusNotFound, "not found"
	case errors.Is(err, ErrUnreachable):
		d.Code, d.Title = http.StatusServiceUnavailable, "NATS is unreachable"
	case errors.Is(err, context.DeadlineExceeded):
		d.Code, d.Title = http.StatusGatewayTimeout, "NATS did not answer in time"
	default:
		s.opts.Logger.Warn("dashboard page failed", "err", err)
	}
	s.pages.page(w, d.Code, "error", d)
}
