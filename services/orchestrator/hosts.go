package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// hostName returns the name of the worker's host: cfg.Host, which must be
// a subject token, or else the engine's id made one ("local" without an
// engine or an id).
func hostName(ctx context.Context, cfg Config, rt runtime.HostReader) (string, error) {
	if cfg.Host != "" {
		if state.SubjectToken(cfg.Host) != cfg.Host {
			return "", fmt.Errorf("host %q: want letters, digits, '-' or '_' only", cfg.Host)
		}
		return cfg.Host, nil
	}
	if rt == nil {
		return "local", nil // a worker that runs no containers
	}
	h, err := rt.Host(ctx)
	if err != nil {
		return "", fmt.Errorf("name the host after its engine: %w", err)
	}
	if h.ID == "" {
		return "local", nil
	}
	return state.SubjectToken(h.ID), nil
}

// ownedHere reports whether a sandbox placed on host is this worker's to
// act on: its own host, or "" (a record from before placement, which
// belongs to the single host there was).
func (w *Worker) ownedHere(host string) bool { return host == "" || host == w.hostName }

// hostLive reports whether host is up and heard from; a failure to read
// its record counts as live, so that a hiccup of the bucket does not
// treat a sandbox as lost.
func (w *Worker) hostLive(ctx context.Context, host string) bool {
	h, silent, err := w.store.HostSilence(ctx, host)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false
	} else if err != nil {
		return true
	}
	return h.State == schemas.HostUp && silent <= w.cfg.HostLostAfter
}

// runHosts heartbeats the worker's host and looks for lost hosts every
// cfg.HostHeartbeat until ctx is done.
func (w *Worker) runHosts(ctx context.Context) {
	every(ctx, w.cfg.HostHeartbeat, func() {
		if err := w.heartbeat(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("host heartbeat", "host", w.hostName, "err", err)
		}
		if ctx.Err() == nil {
			w.detectLostHosts(ctx)
		}
	})
}

// heartbeat refreshes the host's record: capacity, what its ledger holds,
// this worker's last heartbeat. A host that was marked lost meanwhile is
// up again, and the worker cleans up what was lost on it.
func (w *Worker) heartbeat(ctx context.Context) error {
	capacity, err := w.host(ctx)
	if err != nil {
		return err
	}
	h, err := w.rt.Host(ctx)
	if err != nil {
		return err
	}
	key, err := w.engineKey(ctx)
	if err != nil {
		return err
	}
	l, err := w.store.ReadLedger(ctx, key)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	wasLost := false
	_, err = w.store.UpdateHost(ctx, w.hostName, nil, func(hs *schemas.HostStatus) error {
		wasLost = hs.State == schemas.HostLost
		hs.Name, hs.EngineID, hs.State, hs.LostAt = w.hostName, h.ID, schemas.HostUp, time.Time{}
		hs.CPUs, hs.MemoryBytes, hs.DiskBytes = capacity.CPUs, capacity.MemoryBytes, capacity.DiskBytes
		hs.Allocated, hs.Sandboxes = l.Used(), len(l.Allocations)
		if hs.Workers == nil {
			hs.Workers = map[string]time.Time{}
		}
		maps.DeleteFunc(hs.Workers, func(_ string, seen time.Time) bool { return now.Sub(seen) > w.cfg.HostLostAfter })
		hs.Workers[w.cfg.Worker] = now
		hs.LastSeen = now
		return nil
	})
	if err != nil {
		return fmt.Errorf("record host %s: %w", w.hostName, err)
	}
	if wasLost {
		w.log.Warn("host is back after it was marked lost; removing what was lost on it", "host", w.hostName)
		w.reconcile(ctx)
		w.cleanLost(ctx)
		w.removeForeign(ctx)
	}
	return nil
}

// detectLostHosts marks lost every other host not heard from for
// cfg.HostLostAfter, judged on this worker's clock (hostClock): it runs
// every heartbeat, so the judgement follows each host's record. The
// compare-and-set on the host's record lets one
// worker do it; that worker marks the host's sandboxes lost and releases
// its ledger.
func (w *Worker) detectLostHosts(ctx context.Context) {
	names, err := w.store.HostNames(ctx)
	if err != nil {
		w.log.Warn("list hosts", "err", err)
		return
	}
	for _, name := range names {
		if name == w.hostName {
			continue
		}
		h, silent, err := w.store.HostSilence(ctx, name)
		if err != nil || h.State != schemas.HostUp || silent <= w.cfg.HostLostAfter {
			continue
		}
		claimed := false
		h, err = w.store.UpdateHost(ctx, name, state.ErrUnchanged, func(hs *schemas.HostStatus) error {
			claimed = false // a retry after another worker's write starts afresh
			// A heartbeat since the read (another LastSeen) is a sign of
			// life, whatever the clocks say.
			if hs.State != schemas.HostUp || !hs.LastSeen.Equal(h.LastSeen) {
				return state.ErrUnchanged
			}
			hs.State, hs.LostAt, claimed = schemas.HostLost, time.Now().UTC(), true
			return nil
		})
		if err != nil || !claimed {
			continue
		}
		w.log.Warn("host lost: no heartbeat", "host", name, "last_seen", h.LastSeen)
		if err := w.markHostLost(ctx, h); err != nil {
			w.log.Warn("mark the sandboxes of a lost host", "host", name, "err", err)
		}
		if err := w.failQueued(ctx, name); err != nil {
			w.log.Warn("answer the commands queued for a lost host", "host", name, "err", err)
		}
	}
}

// markHostLost marks lost, with an exited event (reason host_lost), every
// sandbox on host h; forgets its pooled sandboxes that no one claimed; and
// releases everything the host's ledger holds.
func (w *Worker) markHostLost(ctx context.Context, h schemas.HostStatus) error {
	ids, err := w.store.SandboxIDs(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		st, _, err := w.store.Sandbox(ctx, id)
		if err != nil || st.Host != h.Name {
			continue
		}
		if st.Pooled && st.ClaimedBy == "" {
			errs = append(errs, w.store.DeleteSandbox(ctx, id))
			continue
		}
		if st.Pooled {
			continue // the link of a claimed sandbox, which is marked itself
		}
		w.markSandboxLost(ctx, id, "", schemas.LostHost, fmt.Sprintf("its host %s has not been heard from since %s", h.Name, h.LastSeen.Format(time.RFC3339)))
	}
	if h.EngineID != "" {
		errs = append(errs, w.store.UpdateLedger(ctx, state.LedgerKey(h.EngineID), func(l *resources.Ledger) error {
			if len(l.Allocations) == 0 {
				return state.ErrUnchanged
			}
			clear(l.Allocations)
			return nil
		}))
	}
	return errors.Join(errs...)
}

// markSandboxLost sets sandbox id lost for reason, with an exited event,
// unless it is ending, ended or lost already, or (when container is not
// "") its record names another container. It reports whether it did.
func (w *Worker) markSandboxLost(ctx context.Context, id, container, reason, detail string) bool {
	marked := false
	st, err := w.store.UpdateSandbox(ctx, id, func(cur *schemas.SandboxStatus) error {
		marked = false // a retry after another worker's write starts afresh
		if container != "" && cur.Container != container {
			return state.ErrUnchanged
		}
		switch cur.State {
		case schemas.StateEnding, schemas.StateEnded, schemas.StateLost:
			return state.ErrUnchanged
		}
		cur.State, cur.Reason, marked = schemas.StateLost, reason, true
		return nil
	})
	if err != nil || !marked {
		return false
	}
	w.log.Warn("sandbox lost", "sandbox", id, "host", st.Host, "reason", reason, "detail", detail)
	w.publishEvent(schemas.Event{Kind: schemas.EventExited, GroupID: st.GroupID, SandboxID: id, Reason: reason, Message: "lost: " + detail, Sandbox: &st})
	return true
}

// removeForeign removes, from the worker's engine, the containers (and
// workspace volumes) of its system whose sandbox is now recorded on
// another host: made again elsewhere while this host was lost. Only the
// container and volume go: the identity, the ledger allocation and the
// record are the other host's sandbox's. Without a system name it removes
// none, as reconcile.
func (w *Worker) removeForeign(ctx context.Context) {
	if w.cfg.System == "" {
		return
	}
	cs, err := w.rt.List(ctx, w.ownLabels(runtime.LabelManaged+"=true")...)
	if err != nil {
		w.log.Warn("list containers to find those of other hosts' sandboxes", "err", err)
		return
	}
	for _, c := range cs {
		id := c.Labels[runtime.LabelSandbox]
		if id == "" || schemas.IsPoolID(id) {
			continue
		}
		st, _, err := w.store.Sandbox(ctx, id)
		if err != nil || w.ownedHere(st.Host) {
			continue
		}
		err = w.rt.Remove(ctx, c.ID)
		if err == nil {
			err = w.rt.RemoveVolume(ctx, runtime.VolumeName(id))
		}
		if err != nil {
			w.log.Warn("remove the container of a sandbox now on another host", "sandbox", id, "host", st.Host, "err", err)
			continue
		}
		w.log.Info("removed the container of a sandbox now on another host", "sandbox", id, "host", st.Host)
	}
}

// cleanLost removes, from the worker's engine, what the sandboxes of its
// host that were marked lost still hold (their containers first). Their
// records stay, lost, until they are ended.
func (w *Worker) cleanLost(ctx context.Context) {
	ids, err := w.store.SandboxIDs(ctx)
	if err != nil {
		w.log.Warn("list sandboxes to clean up lost ones", "err", err)
		return
	}
	for _, id := range ids {
		st, _, err := w.store.Sandbox(ctx, id)
		if err != nil || st.State != schemas.StateLost || !w.ownedHere(st.Host) {
			continue
		}
		unlock := w.locks.lock(sandboxKey(id))
		container := st.Container
		if container == "" {
			container = runtime.ContainerName(id)
		}
		err = errors.Join(w.removeSandboxResources(ctx, container, id), w.removeClaimed(ctx, st))
		unlock()
		if err != nil {
			w.log.Warn("remove what a lost sandbox held", "sandbox", id, "err", err)
		}
	}
}

// failQueued answers, with CodeUnavailable, the commands waiting on the
// consumer of lost host name (forwarded while it was silent), so that
// their requesters do not wait for a host that may never come back; a
// command already answered is only acknowledged. It takes what is
// waiting now: a command the host's dead worker held comes back after
// AckWait, and the host's workers take it if they return.
func (w *Worker) failQueued(ctx context.Context, name string) error {
	cons, err := w.js.Consumer(ctx, schemas.CommandStream, schemas.HostConsumer(name))
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	for {
		batch, err := cons.FetchNoWait(64)
		if err != nil {
			return err
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			subject, _ := clientSubject(msg.Subject())
			hdr := maps.Clone(msg.Headers())
			delete(hdr, nats.MsgIdHdr)
			cmd, _, err := decodeCommand(subject, hdr, msg.Data())
			if err != nil {
				_ = msg.Term()
				continue
			}
			if _, ok := w.previousResult(ctx, cmd.ID); !ok {
				res := schemas.CommandResult{CommandID: cmd.ID, Kind: cmd.Kind, Worker: w.cfg.Worker,
					Error: schemas.Errorf(schemas.CodeUnavailable, "host %s was lost before it ran %s", name, cmd.Kind)}
				if err := w.publishResult(res, w.log.With("command", cmd.ID)); err != nil {
					continue // left for the next delivery
				}
			}
			_ = msg.Ack()
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}
