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
	"github.com/sandox/sandox/services/orchestrator/routing"
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

// hostLoss is what the orchestrator does for the hosts part
// (placement.Hosts) when a host is lost or this one comes back.
type hostLoss struct{ w *Worker }

var _ placement.Lost = hostLoss{}

// MarkLost marks sandbox id lost (Worker.markSandboxLost).
func (l hostLoss) MarkLost(ctx context.Context, id, container, reason, detail string) bool {
	return l.w.sandboxes.MarkLost(ctx, id, container, reason, detail)
}

// FailQueued answers the commands queued for lost host name
// (Worker.failQueued).
func (l hostLoss) FailQueued(ctx context.Context, name string) error {
	return l.w.failQueued(ctx, name)
}

// Back removes what sandboxes that no longer exist left behind, what was
// lost on this host and what was made again elsewhere meanwhile.
func (l hostLoss) Back(ctx context.Context) {
	l.w.sandboxes.Reconcile(ctx)
	l.w.sandboxes.CleanLost(ctx)
	l.w.sandboxes.RemoveForeign(ctx)
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
			subject, _ := routing.ClientSubject(msg.Subject())
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
