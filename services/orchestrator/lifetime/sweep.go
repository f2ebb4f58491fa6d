package lifetime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// Why a lifetime ended, the Reason of an EventExpired.
const (
	ExpiredTTL      = "ttl"
	ExpiredIdle     = "idle_timeout"
	ExpiredGroupTTL = "group_ttl"
)

// Seconds is s seconds as a duration.
func Seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Set records the lifetime limits of spec in sandbox st, created at now.
func Set(st *schemas.SandboxStatus, spec schemas.SandboxSpec, now time.Time) {
	st.CreatedAt = now
	if spec.TTLSeconds > 0 {
		st.ExpiresAt = now.Add(Seconds(spec.TTLSeconds))
	}
	st.IdleTimeoutSeconds = spec.IdleTimeoutSeconds
}

// Sweeper ends the sandboxes and groups whose lifetime is over. It is
// safe for concurrent use.
type Sweeper struct {
	store    *state.Store
	js       jetstream.JetStream
	publish  func(schemas.Event)
	interval time.Duration
	log      *slog.Logger
}

// New returns the sweeper of the records in store, which reads the audit
// log and enqueues end commands through js, and announces expiries with
// publish. It does nothing until Run or Sweep.
func New(store *state.Store, js jetstream.JetStream, publish func(schemas.Event), interval time.Duration, log *slog.Logger) *Sweeper {
	return &Sweeper{store: store, js: js, publish: publish, interval: interval, log: log}
}

// Run sweeps every interval until ctx is done; failures are logged. It
// blocks until then.
func (s *Sweeper) Run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("lifetime sweep", "err", err)
		}
	}
}

// Sweep checks every group and sandbox once, and ends those whose
// lifetime is over (or leaves them to the worker that claimed them
// first). The error joins what failed; the rest is done.
func (s *Sweeper) Sweep(ctx context.Context) error {
	now := time.Now().UTC()
	var errs []error
	groups, err := s.store.GroupIDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range groups {
		g, _, err := s.store.Group(ctx, id)
		if err != nil || g.ExpiresAt.IsZero() || now.Before(g.ExpiresAt) || g.Expired != "" {
			continue
		}
		errs = append(errs, s.expireGroup(ctx, id))
	}
	sandboxes, err := s.store.SandboxIDs(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, id := range sandboxes {
		st, _, err := s.store.Sandbox(ctx, id)
		if err != nil || st.Expired != "" {
			continue
		}
		if why := s.overdue(ctx, st, now); why != "" {
			errs = append(errs, s.expireSandbox(ctx, id, why))
		}
	}
	return errors.Join(errs...)
}

// overdue says why the sandbox's lifetime is over, or "".
func (s *Sweeper) overdue(ctx context.Context, st schemas.SandboxStatus, now time.Time) string {
	switch st.State {
	case schemas.StateCreated, schemas.StateRunning, schemas.StateFailed, schemas.StatePaused:
	default:
		return ""
	}
	if !st.ExpiresAt.IsZero() && !now.Before(st.ExpiresAt) {
		return ExpiredTTL
	}
	if st.IdleTimeoutSeconds <= 0 || st.State != schemas.StateRunning || st.StartedAt.IsZero() {
		return ""
	}
	last := st.StartedAt
	if st.ResumedAt.After(last) {
		last = st.ResumedAt // the time paused is not idle time
	}
	if b, ok := s.lastBatch(ctx, st.ID); ok && b.After(last) {
		last = b
	}
	if now.Sub(last) >= Seconds(st.IdleTimeoutSeconds) {
		return ExpiredIdle
	}
	return ""
}

// lastBatch is when the sandbox's executor last recorded a batch in the
// audit log (schemas.BatchRecordSubject), by the server's clock.
func (s *Sweeper) lastBatch(ctx context.Context, id string) (time.Time, bool) {
	stream, err := s.js.Stream(ctx, schemas.EventStream)
	if err != nil {
		return time.Time{}, false
	}
	m, err := stream.GetLastMsgForSubject(ctx, schemas.BatchRecordSubject(id))
	if err != nil {
		return time.Time{}, false
	}
	return m.Time, true
}

// expireSandbox claims the sandbox for ending (compare-and-set on its
// Expired field); the worker that wins publishes the expired event and the
// end_sandbox command.
func (s *Sweeper) expireSandbox(ctx context.Context, id, why string) error {
	claimed := false
	st, err := s.store.UpdateSandbox(ctx, id, func(st *schemas.SandboxStatus) error {
		claimed = false // a retry after another worker's write starts afresh
		if st.Expired != "" {
			return state.ErrUnchanged
		}
		st.Expired, claimed = why, true
		return nil
	})
	if err != nil || !claimed {
		return ignoreNotFound(err)
	}
	s.publish(schemas.Event{Kind: schemas.EventExpired, GroupID: st.GroupID, SandboxID: id, Reason: why, Message: "lifetime over: " + why, Sandbox: &st})
	return s.enqueue(ctx, schemas.Command{ID: fmt.Sprintf("expire-%s-%d", id, st.CreatedAt.UnixNano()), Kind: schemas.EndSandbox, GroupID: st.GroupID, SandboxID: id})
}

// expireGroup claims the group, announces the expiry of each of its
// sandboxes, and publishes end_group.
func (s *Sweeper) expireGroup(ctx context.Context, id string) error {
	claimed := false
	g, err := s.store.UpdateGroup(ctx, id, func(g *schemas.GroupStatus) error {
		claimed = false // a retry after another worker's write starts afresh
		if g.Expired != "" {
			return state.ErrUnchanged
		}
		g.Expired, claimed = ExpiredGroupTTL, true
		return nil
	})
	if err != nil || !claimed {
		return ignoreNotFound(err)
	}
	for _, sb := range g.Sandboxes {
		st, err := s.store.UpdateSandbox(ctx, sb, func(st *schemas.SandboxStatus) error {
			if st.Expired != "" {
				return state.ErrUnchanged
			}
			st.Expired = ExpiredGroupTTL
			return nil
		})
		if err == nil {
			s.publish(schemas.Event{Kind: schemas.EventExpired, GroupID: id, SandboxID: sb, Reason: ExpiredGroupTTL, Message: "group lifetime over", Sandbox: &st})
		}
	}
	return s.enqueue(ctx, schemas.Command{ID: fmt.Sprintf("expire-%s-%d", id, g.CreatedAt.UnixNano()), Kind: schemas.EndGroup, GroupID: id})
}

// enqueue publishes a command of the orchestrator's own on the work queue,
// deduplicated on its id.
func (s *Sweeper) enqueue(ctx context.Context, cmd schemas.Command) error {
	cmd.IssuedAt = time.Now().UTC()
	data, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	msg := nats.NewMsg(schemas.CommandSubject(cmd.Kind))
	msg.Data = data
	if _, err := s.js.PublishMsg(ctx, msg, jetstream.WithMsgID(cmd.ID)); err != nil {
		return fmt.Errorf("enqueue %s %s: %w", cmd.Kind, cmd.ID, err)
	}
	return nil
}

// ignoreNotFound is err, or nil when err says the record is gone (ended
// meanwhile).
func ignoreNotFound(err error) error {
	if errors.Is(err, schemas.CodeNotFound) {
		return nil
	}
	return err
}
