package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// requestTimeout bounds the answer to one request on a sandox.req subject.
const requestTimeout = 15 * time.Second

// serveRequests answers the requests that need no work queue: sandbox and
// group status (read from the buckets) and live sandbox stats. Every worker
// subscribes in the queue group schemas.RequestQueue, so each request is
// answered by one of them. A stats request for a sandbox of another host
// is passed to that host's workers (schemas.HostStatsSubject, the same
// queue group) and their answer relayed, so that each request gets one
// answer, from a worker that can read the container. The handlers run on the subscriptions' own
// goroutines, owned by the NATS connection; the returned stop drains the
// subscriptions, which waits for the handlers in hand to finish.
func (w *Worker) serveRequests(ctx context.Context) (stop func(), err error) {
	handlers := []struct {
		subject string
		answer  func(ctx context.Context, id string) schemas.StatusReply
	}{
		{schemas.SandboxStatusSubject("*"), w.sandboxStatusReply},
		{schemas.GroupStatusSubject("*"), w.groupStatusReply},
		{schemas.SandboxStatsSubject("*"), w.sandboxStatsReply},
		{schemas.HostStatsSubject(w.hostName, "*"), w.localStatsReply},
	}
	var subs []*nats.Subscription
	var closed []<-chan nats.SubStatus
	stop = func() {
		for _, s := range subs {
			_ = s.Drain()
		}
		// Drain returns at once; wait until the handlers in hand are done.
		timeout := time.After(requestTimeout)
		for _, c := range closed {
			select {
			case <-c:
			case <-timeout:
				w.log.Warn("request handlers still running after the drain timeout")
				return
			}
		}
	}
	for _, h := range handlers {
		sub, err := w.nc.QueueSubscribe(h.subject, schemas.RequestQueue, func(m *nats.Msg) {
			w.answer(ctx, m, h.answer)
		})
		if err != nil {
			stop()
			return nil, fmt.Errorf("subscribe to %s: %w", h.subject, err)
		}
		subs = append(subs, sub)
		closed = append(closed, sub.StatusChanged(nats.SubscriptionClosed))
	}
	if err := w.nc.Flush(); err != nil {
		stop()
		return nil, fmt.Errorf("flush request subscriptions: %w", err)
	}
	return stop, nil
}

// answer runs one request's handler on the id, the subject's last token,
// and replies with its StatusReply.
func (w *Worker) answer(ctx context.Context, m *nats.Msg, handle func(context.Context, string) schemas.StatusReply) {
	id := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	var reply schemas.StatusReply
	if err := schemas.ValidateID("sandbox or group", id); err != nil {
		reply.Error = wire.Error(err)
	} else {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
		reply = handle(rctx, id)
		cancel()
	}
	reply.Worker = w.cfg.Worker
	data, err := json.Marshal(reply)
	if err != nil {
		w.log.Error("encode request reply", "subject", m.Subject, "err", err)
		return
	}
	if err := m.Respond(data); err != nil && !errors.Is(err, nats.ErrMsgNoReply) {
		w.log.Warn("reply to request", "subject", m.Subject, "err", err)
	}
}

// sandboxStatusReply answers SandboxStatusSubject with the recorded status.
func (w *Worker) sandboxStatusReply(ctx context.Context, id string) schemas.StatusReply {
	st, _, err := w.store.Sandbox(ctx, id)
	if err != nil {
		return schemas.StatusReply{Error: wire.Error(err)}
	}
	return schemas.StatusReply{Sandbox: &st}
}

// groupStatusReply answers GroupStatusSubject with the group's recorded
// status and those of its sandboxes that are still recorded, and counts
// them per host (GroupStatus.Hosts).
func (w *Worker) groupStatusReply(ctx context.Context, id string) schemas.StatusReply {
	g, _, err := w.store.Group(ctx, id)
	if err != nil {
		return schemas.StatusReply{Error: wire.Error(err)}
	}
	reply := schemas.StatusReply{Group: &g}
	for _, sb := range g.Sandboxes {
		st, _, err := w.store.Sandbox(ctx, sb)
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
			host = w.hostName // a record from before placement: the single host's
		}
		g.Hosts[host]++
	}
	return reply
}

// sandboxStatsReply answers SandboxStatsSubject with a live reading of the
// sandbox's use against its limits.
func (w *Worker) sandboxStatsReply(ctx context.Context, id string) schemas.StatusReply {
	if st, _, err := w.store.Sandbox(ctx, id); err == nil && !w.hosts.Here(st.Host) && st.State != schemas.StateLost && w.hosts.Live(ctx, st.Host) {
		m, err := w.nc.RequestWithContext(ctx, schemas.HostStatsSubject(st.Host, id), nil)
		if err != nil {
			return schemas.StatusReply{Error: schemas.Errorf(schemas.CodeUnavailable, "sandbox %s: host %s did not answer: %v", id, st.Host, err)}
		}
		var reply schemas.StatusReply
		if err := json.Unmarshal(m.Data, &reply); err != nil {
			return schemas.StatusReply{Error: wire.Error(fmt.Errorf("sandbox %s: stats from host %s: %w", id, st.Host, err))}
		}
		return reply
	}
	return w.localStatsReply(ctx, id)
}

// localStatsReply answers a stats request for a sandbox of this host.
func (w *Worker) localStatsReply(ctx context.Context, id string) schemas.StatusReply {
	res, err := w.sandboxes.Stats(ctx, schemas.Command{SandboxID: id})
	if err != nil {
		return schemas.StatusReply{Error: wire.Error(err)}
	}
	reply := schemas.StatusReply{Stats: res.Stats}
	if len(res.Sandboxes) == 1 {
		reply.Sandbox = &res.Sandboxes[0]
	}
	return reply
}
