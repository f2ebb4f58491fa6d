package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// setLifetime records the sandbox's lifetime limits at its creation.
func setLifetime(st *schemas.SandboxStatus, spec schemas.SandboxSpec, now time.Time) {
	st.CreatedAt = now
	if spec.TTLSeconds > 0 {
		st.ExpiresAt = now.Add(seconds(spec.TTLSeconds))
	}
	st.IdleTimeoutSeconds = spec.IdleTimeoutSeconds
}

// sweepLifetimes ends, every cfg.LifetimeInterval until ctx is done, the
// sandboxes and groups whose lifetime is over. Every worker sweeps; the
// compare-and-set that claims a sandbox or group (its Expired field) lets
// one of them end it, by publishing the end command on the work queue.
func (w *Worker) sweepLifetimes(ctx context.Context) {
	every(ctx, w.cfg.LifetimeInterval, func() {
		if err := w.sweepOnce(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("lifetime sweep", "err", err)
		}
	})
}

// sweepOnce checks every group and sandbox once.
func (w *Worker) sweepOnce(ctx context.Context) error {
	now := time.Now().UTC()
	var errs []error
	groups, err := w.store.GroupIDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range groups {
		g, _, err := w.store.Group(ctx, id)
		if err != nil || g.ExpiresAt.IsZero() || now.Before(g.ExpiresAt) || g.Expired != "" {
			continue
		}
		errs = append(errs, w.expireGroup(ctx, id))
	}
	sandboxes, err := w.store.SandboxIDs(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, id := range sandboxes {
		st, _, err := w.store.Sandbox(ctx, id)
		if err != nil || st.Expired != "" {
			continue
		}
		if why := w.overdue(ctx, st, now); why != "" {
			errs = append(errs, w.expireSandbox(ctx, id, why))
		}
	}
	return errors.Join(errs...)
}

// overdue says why the sandbox's lifetime is over, or "".
func (w *Worker) overdue(ctx context.Context, st schemas.SandboxStatus, now time.Time) string {
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
	if b, ok := w.lastBatch(ctx, st.ID); ok && b.After(last) {
		last = b
	}
	if now.Sub(last) >= seconds(st.IdleTimeoutSeconds) {
		return ExpiredIdle
	}
	return ""
}

// lastBatch is when the sandbox's executor last recorded a batch in the
// audit log (schemas.BatchRecordSubject), by the server's clock.
func (w *Worker) lastBatch(ctx context.Context, id string) (time.Time, bool) {
	stream, err := w.js.Stream(ctx, schemas.EventStream)
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
func (w *Worker) expireSandbox(ctx context.Context, id, why string) error {
	claimed := false
	st, err := w.store.UpdateSandbox(ctx, id, func(st *schemas.SandboxStatus) error {
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
	w.publishEvent(schemas.Event{Kind: schemas.EventExpired, GroupID: st.GroupID, SandboxID: id, Reason: why, Message: "lifetime over: " + why, Sandbox: &st})
	return w.enqueue(ctx, schemas.Command{ID: fmt.Sprintf("expire-%s-%d", id, st.CreatedAt.UnixNano()), Kind: schemas.EndSandbox, GroupID: st.GroupID, SandboxID: id})
}

// expireGroup claims the group, announces the expiry of each of its
// sandboxes, and publishes end_group.
func (w *Worker) expireGroup(ctx context.Context, id string) error {
	claimed := false
	g, err := w.store.UpdateGroup(ctx, id, func(g *schemas.GroupStatus) error {
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
		st, err := w.store.UpdateSandbox(ctx, sb, func(st *schemas.SandboxStatus) error {
			if st.Expired != "" {
				return state.ErrUnchanged
			}
			st.Expired = ExpiredGroupTTL
			return nil
		})
		if err == nil {
			w.publishEvent(schemas.Event{Kind: schemas.EventExpired, GroupID: id, SandboxID: sb, Reason: ExpiredGroupTTL, Message: "group lifetime over", Sandbox: &st})
		}
	}
	return w.enqueue(ctx, schemas.Command{ID: fmt.Sprintf("expire-%s-%d", id, g.CreatedAt.UnixNano()), Kind: schemas.EndGroup, GroupID: id})
}

// enqueue publishes a command of the orchestrator's own on the work queue,
// deduplicated on its id.
func (w *Worker) enqueue(ctx context.Context, cmd schemas.Command) error {
	cmd.IssuedAt = time.Now().UTC()
	data, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	msg := nats.NewMsg(schemas.CommandSubject(cmd.Kind))
	msg.Data = data
	if _, err := w.js.PublishMsg(ctx, msg, jetstream.WithMsgID(cmd.ID)); err != nil {
		return fmt.Errorf("enqueue %s %s: %w", cmd.Kind, cmd.ID, err)
	}
	return nil
}

func ignoreNotFound(err error) error {
	if err != nil && wireError(err).Code == schemas.CodeNotFound {
		return nil
	}
	return err
}
