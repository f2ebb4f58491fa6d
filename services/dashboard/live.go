package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/audit"
)

// heartbeat is how often an idle stream sends a comment, so that a closed
// page is noticed and proxies keep the connection.
const heartbeat = 15 * time.Second

// sse is one Server-Sent Events stream to a page.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startSSE answers r with an event stream.
func startSSE(w http.ResponseWriter) (*sse, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, rc: http.NewResponseController(w)}
	return s, s.rc.Flush()
}

// send writes one event whose data is html, with id when not "", and
// flushes it.
func (s *sse) send(event, id, html string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\n", event)
	if id != "" {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	for line := range strings.SplitSeq(html, "\n") {
		fmt.Fprintf(&b, "data: %s\n", strings.TrimRight(line, "\r"))
	}
	b.WriteString("\n")
	if _, err := s.w.Write([]byte(b.String())); err != nil {
		return err
	}
	return s.rc.Flush()
}

// ping writes a comment line.
func (s *sse) ping() error {
	if _, err := s.w.Write([]byte(": ping\n\n")); err != nil {
		return err
	}
	return s.rc.Flush()
}

// liveEvents streams the audit rows after ?after= (or the Last-Event-ID a
// reconnecting browser sends) as "row" events, each a table row, filtered
// by ?sandbox= and ?group=, until the page goes away.
func (s *Server) liveEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, _ := strconv.ParseUint(q.Get("after"), 10, 64)
	if last, err := strconv.ParseUint(r.Header.Get("Last-Event-ID"), 10, 64); err == nil && last > after {
		after = last
	}
	sandbox, group := q.Get("sandbox"), q.Get("group")
	match := func(row Row) bool {
		return (sandbox == "" || row.Sandbox == sandbox) && (group == "" || row.Group == group)
	}
	backlog, rows, stop := s.feed.watch(after)
	defer stop()
	out, err := startSSE(w)
	if err != nil {
		return
	}
	send := func(row Row) error {
		if !match(row) {
			return nil
		}
		html, err := s.pages.fragment("row", row)
		if err != nil {
			return err
		}
		return out.send("row", strconv.FormatUint(row.Seq, 10), html)
	}
	for _, row := range backlog {
		if send(row) != nil {
			return
		}
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case row := <-rows:
			if send(row) != nil {
				return
			}
		case <-tick.C:
			if out.ping() != nil {
				return
			}
		}
	}
}

// liveOverview streams the overview's tables as "html" events: read again
// every Refresh, sent when they changed.
func (s *Server) liveOverview(w http.ResponseWriter, r *http.Request) {
	s.poll(w, r, func(ctx context.Context) (string, error) {
		st, err := s.state(ctx)
		if err != nil {
			return s.pages.fragment("problem", err.Error())
		}
		return s.pages.fragment("state", st)
	})
}

// populationData is the progress of a group's population, the address of
// its stream, or why it cannot be read.
type populationData struct {
	Sources []schemas.PopulationEvent
	URL     string
	Err     error
}

// livePopulation streams the progress of a group's population as "html"
// events, read every Refresh.
func (s *Server) livePopulation(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if schemas.ValidateID("group", id) != nil {
		http.Error(w, "no such group", http.StatusNotFound)
		return
	}
	s.poll(w, r, func(ctx context.Context) (string, error) {
		d := populationData{Err: s.reachable()}
		if d.Err == nil {
			d.Sources, d.Err = audit.Population(ctx, s.js, id)
		}
		return s.pages.fragment("population", d)
	})
}

// usageData is a sandbox's live use, or why it cannot be read.
type usageData struct {
	Usage schemas.SandboxUsage
	Err   error
}

// liveUsage streams a sandbox's live use as "html" events, read every
// Refresh with the SDK's stats request.
func (s *Server) liveUsage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if schemas.ValidateID("sandbox", id) != nil {
		http.Error(w, "no such sandbox", http.StatusNotFound)
		return
	}
	s.poll(w, r, func(ctx context.Context) (string, error) {
		var d usageData
		switch {
		case s.opts.NoUsage:
			d.Err = fmt.Errorf("%w: the dashboard's credentials may not ask for it (audit); give it client or control credentials", ErrNoUsage)
		default:
			if d.Err = s.reachable(); d.Err == nil {
				d.Usage, d.Err = readUsage(ctx, s.nc, id)
			}
		}
		return s.pages.fragment("usage", d)
	})
}

// poll sends what read renders every Refresh, when it changed, until the
// page goes away.
func (s *Server) poll(w http.ResponseWriter, r *http.Request, read func(context.Context) (string, error)) {
	out, err := startSSE(w)
	if err != nil {
		return
	}
	tick := time.NewTicker(s.opts.Refresh)
	defer tick.Stop()
	idle := time.Now()
	var last string
	for {
		ctx, cancel := s.readCtx(r.Context())
		html, err := read(ctx)
		cancel()
		if err != nil {
			s.opts.Logger.Warn("dashboard live part failed", "path", r.URL.Path, "err", err)
			return
		}
		if html != last {
			if out.send("html", "", html) != nil {
				return
			}
			last, idle = html, time.Now()
		} else if time.Since(idle) > heartbeat {
			if out.ping() != nil {
				return
			}
			idle = time.Now()
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
