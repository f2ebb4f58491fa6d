package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/placement"
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
// act on (placement.Hosts.Here).
func (w *Worker) ownedHere(host string) bool { return w.hosts.Here(host) }

// hostLive reports whether host is up and heard from
// (placement.Hosts.Live).
func (w *Worker) hostLive(ctx context.Context, host string) bool { return w.hosts.Live(ctx, host) }

// hostLoss is what the orchestrator does for the hosts part
// (placement.Hosts) when a host is lost or this one comes back.
type hostLoss struct{ w *Worker }

var _ placement.Lost = hostLoss{}

// MarkLost marks sandbox id lost (Worker.markSandboxLost).
func (l hostLoss) MarkLost(ctx context.Context, id, container, reason, detail string) bool {
	return l.w.markSandboxLost(ctx, id, container, reason, detail)
}

// FailQueued answers the commands queued for lost host name
// (Worker.failQueued).
func (l hostLoss) FailQueued(ctx context.Context, name string) error {
	return l.w.failQueued(ctx, name)
}

// Back removes what sandboxes that no longer exist left behind, what was
// lost on this host and what was made again elsewhere meanwhile.
func (l hostLoss) Back(ctx context.Context) {
	l.w.reconcile(ctx)
	l.w.cleanLost(ctx)
	l.w.removeForeign(ctx)
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
