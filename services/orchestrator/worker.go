package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/routing"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// Run reconciles what sandboxes that no longer exist left behind, then
// consumes commands until ctx is done, handling up to cfg.Concurrency at
// once, while it follows the engine's events. When ctx is done it stops
// fetching, waits for the commands in hand and the event watcher to
// finish, and returns. Every goroutine it starts has ended when it returns.
// A ctx done while it is still setting up is a stop, not an error.
func (w *Worker) Run(ctx context.Context) error {
	shared, err := w.consumer(ctx, schemas.CommandConsumer, schemas.SharedCommandFilter, "orchestrator workers share this consumer")
	if err != nil {
		return stoppedOr(ctx, err)
	}
	own, err := w.consumer(ctx, schemas.HostConsumer(w.hostName), schemas.HostCommandFilter(w.hostName), "the workers of host "+w.hostName+" share this consumer")
	if err != nil {
		return stoppedOr(ctx, err)
	}
	// The host is recorded before anything is placed, so that a create
	// this worker takes can be placed here.
	if err := w.hosts.Heartbeat(ctx); err != nil {
		w.log.Warn("host heartbeat", "err", err)
	}
	w.sandboxes.Reconcile(ctx)
	iters := make([]jetstream.MessagesContext, 0, 2)
	defer func() {
		for _, it := range iters {
			it.Stop()
		}
	}()
	for _, cons := range []jetstream.Consumer{shared, own} {
		it, err := cons.Messages(jetstream.PullMaxMessages(w.cfg.Concurrency))
		if err != nil {
			return fmt.Errorf("consume %s: %w", schemas.CommandStream, err)
		}
		iters = append(iters, it)
	}
	w.sandboxes.Reconcile(ctx)
	w.databases.Reconcile(ctx)
	w.sandboxes.MarkMissing(ctx)
	w.sandboxes.CleanLost(ctx)
	w.pools.Reap(ctx, true)
	w.sandboxes.RemoveForeign(ctx)
	stopRequests, err := w.requests.Serve(ctx)
	if err != nil {
		return stoppedOr(ctx, err)
	}
	defer stopRequests()
	w.log.Info("orchestrator worker consuming", "stream", schemas.CommandStream, "concurrency", w.cfg.Concurrency)

	// Owned goroutines: the event watcher, the sweepers and the drainer run
	// until stopped (ctx done, or a loop below ending); the command
	// handlers until their command is done. bg and consumers wait for
	// them.
	var bg, consumers sync.WaitGroup
	stopped, stop := context.WithCancel(ctx)
	defer func() {
		stop()
		bg.Wait()
	}()
	bg.Go(func() { w.watcher.Run(stopped) })
	bg.Go(func() { w.lifetimes.Run(stopped) })
	bg.Go(func() { images.CollectEvery(stopped, w.imageStore, w.cfg.ImageGC, w.log) })
	bg.Go(func() { w.hosts.Run(stopped) })
	bg.Go(func() { w.pools.Run(stopped) })
	bg.Go(func() { w.relayWebhooks(stopped) })
	bg.Go(func() { w.sandboxes.RunAutoCheckpoints(stopped) })
	bg.Go(func() {
		<-stopped.Done()
		for _, it := range iters {
			it.Drain()
		}
	})

	// Each consumer has its own handler slots: a group command on the
	// shared consumer waits for its parts on the host consumers, which
	// must never wait behind it.
	errs := make([]error, len(iters))
	for i, it := range iters {
		consumers.Go(func() {
			errs[i] = w.consume(ctx, it)
			stop() // one broken consumer stops the worker
		})
	}
	consumers.Wait()
	return errors.Join(errs...)
}

// consumer creates, or updates to the current configuration, the durable
// consumer name on the command stream with filter. An existing consumer
// whose filter cannot be changed in place (one made before placement,
// without a filter) is deleted and made again: the work queue keeps the
// messages it had not acknowledged, and they are delivered afresh.
func (w *Worker) consumer(ctx context.Context, name, filter, description string) (jetstream.Consumer, error) {
	cfg := jetstream.ConsumerConfig{
		Durable:       name,
		Description:   description,
		FilterSubject: filter,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       w.cfg.AckWait,
		MaxDeliver:    5,
		MaxAckPending: 256,
	}
	var cons jetstream.Consumer
	err := waitForBus(ctx, w.cfg.BusWait, w.log, "consumer "+name, func(ctx context.Context) (err error) {
		cons, err = w.js.CreateOrUpdateConsumer(ctx, schemas.CommandStream, cfg)
		return err
	})
	if err != nil && !clusterNotReady(ctx, err) {
		w.log.Info("making the command consumer afresh", "consumer", name, "filter", filter, "err", err)
		if derr := w.js.DeleteConsumer(ctx, schemas.CommandStream, name); derr == nil {
			cons, err = w.js.CreateOrUpdateConsumer(ctx, schemas.CommandStream, cfg)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", name, err)
	}
	return cons, nil
}

// consume handles the messages of it, up to cfg.Concurrency at once, until
// it is drained; it waits for the handlers in hand.
func (w *Worker) consume(ctx context.Context, it jetstream.MessagesContext) error {
	var handlers sync.WaitGroup
	slots := make(chan struct{}, w.cfg.Concurrency)
	for {
		msg, err := it.Next()
		if errors.Is(err, jetstream.ErrNoHeartbeat) {
			// The consumer's server went quiet: its node died, or the
			// cluster is electing the consumer's leader. The iterator
			// pulls again by itself; the worker goes on.
			w.log.Warn("no heartbeat from the command consumer; pulling again", "err", err)
			continue
		}
		if err != nil {
			handlers.Wait()
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return fmt.Errorf("next command: %w", err)
		}
		slots <- struct{}{}
		handlers.Go(func() {
			defer func() { <-slots }()
			// A command in hand is finished even when the worker is told
			// to stop, so that its requester gets an answer.
			w.handle(context.WithoutCancel(ctx), msg)
		})
	}
}

// handle runs one command message: decode, dedupe, execute, publish the
// result, then acknowledge.
//
// A command that clients published (the shared consumer) and that another
// host must run (route) is forwarded to that host instead, after the
// dedupe; one forwarded here (the host's consumer) runs here.
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg) {
	subject, forwarded := routing.ClientSubject(msg.Subject())
	hdr := msg.Headers()
	if forwarded {
		// The copy's Nats-Msg-Id is the forward's, not the command's.
		hdr = maps.Clone(hdr)
		delete(hdr, nats.MsgIdHdr)
	}
	cmd, refusal, err := decodeCommand(subject, hdr, msg.Data())
	if err != nil {
		w.log.Error("poison command: no id to answer", "subject", msg.Subject(), "err", err)
		_ = msg.Term()
		return
	}
	log := w.log.With("command", cmd.ID, "kind", cmd.Kind, "group", cmd.GroupID, "sandbox", cmd.SandboxID)

	// A redelivered command whose result was already published (its worker
	// died before the ack) is answered again, not run twice.
	if prev, ok := w.previousResult(ctx, cmd.ID); ok {
		w.publishResult(prev, log)
		_ = msg.Ack()
		return
	}

	if refusal == nil && !forwarded {
		host, err := w.router.Route(ctx, cmd)
		if err != nil {
			refusal = wire.Error(err)
		} else if host != "" && host != w.hostName {
			w.router.Forward(ctx, msg, cmd, host)
			return
		}
	}

	var delivery uint64
	if md, err := msg.Metadata(); err == nil {
		delivery = md.NumDelivered
	}
	w.recordCommand(ctx, cmd, hdr, delivery)

	stop := keepAlive(msg, w.cfg.AckWait/3)
	start := time.Now()
	res := schemas.CommandResult{Error: refusal}
	if refusal == nil {
		res = w.execute(ctx, cmd, forwarded)
	}
	stop()
	if refusal == nil && cmd.Kind == schemas.CreateSandbox && res.Error != nil && res.Error.Code == schemas.CodeResourceExhausted &&
		w.router.RetryElsewhere(ctx, msg, hdr, cmd) {
		return
	}
	res.CommandID, res.Kind, res.Worker = cmd.ID, cmd.Kind, w.cfg.Worker
	res.DurationMS = float64(time.Since(start).Microseconds()) / 1000

	if err := w.publishResult(res, log); err != nil {
		// The requester cannot learn the outcome; let another delivery try.
		_ = msg.NakWithDelay(time.Second)
		return
	}
	if err := msg.Ack(); err != nil {
		log.Warn("ack command", "err", err)
	}
	if res.Error != nil {
		log.Info("command refused", "code", res.Error.Code, "err", res.Error.Message, "took", time.Since(start))
	} else {
		log.Info("command done", "took", time.Since(start))
	}
}

// execute dispatches a command that decodeCommand accepted, turning every
// failure into the result's wire error. A command forwarded to this host
// (hostPart) takes no group lock, and an end_group forwarded here is this
// host's part of it (endGroupPart).
func (w *Worker) execute(ctx context.Context, cmd schemas.Command, hostPart bool) (res schemas.CommandResult) {
	defer func() {
		if p := recover(); p != nil {
			res = schemas.CommandResult{Error: schemas.Errorf(schemas.CodeInternal, "orchestrator panicked: %v", p)}
		}
	}()
	var err error
	switch cmd.Kind {
	case schemas.CreateGroup:
		res, err = w.groups.CreateGroup(ctx, cmd)
	case schemas.StartGroup:
		res, err = w.groups.StartGroup(ctx, cmd)
	case schemas.EndGroup:
		if hostPart {
			res, err = w.groups.EndGroupPart(ctx, cmd)
		} else {
			res, err = w.groups.EndGroup(ctx, cmd)
		}
	case schemas.CreateSandbox:
		res, err = w.groups.CreateSandbox(ctx, cmd, hostPart)
	case schemas.StartSandbox:
		res, err = w.sandboxes.StartSandbox(ctx, cmd)
	case schemas.EndSandbox:
		res, err = w.sandboxes.EndSandbox(ctx, cmd)
	case schemas.SandboxStats:
		res, err = w.sandboxes.Stats(ctx, cmd)
	case schemas.PauseSandbox, schemas.ResumeSandbox:
		res, err = w.sandboxes.PauseOrResume(ctx, cmd)
	case schemas.TakeCheckpoint, schemas.ListCheckpoints, schemas.DiffCheckpoints, schemas.RollbackSandbox:
		res, err = w.sandboxes.Checkpoint(ctx, cmd)
	default:
		err = schemas.Errorf(schemas.CodeBadRequest, "unknown command kind %q", cmd.Kind)
	}
	if err != nil {
		res.Error = wire.Error(err)
	}
	return res
}

func (w *Worker) previousResult(ctx context.Context, id string) (schemas.CommandResult, bool) {
	var res schemas.CommandResult
	stream, err := w.js.Stream(ctx, schemas.EventStream)
	if err != nil {
		return res, false
	}
	m, err := stream.GetLastMsgForSubject(ctx, schemas.ResultSubject(id))
	if err != nil || json.Unmarshal(m.Data, &res) != nil {
		return res, false
	}
	return res, true
}

func (w *Worker) publishResult(res schemas.CommandResult, log *slog.Logger) error {
	data, err := json.Marshal(res)
	if err == nil {
		err = w.nc.Publish(schemas.ResultSubject(res.CommandID), data)
	}
	if err == nil {
		err = w.nc.Flush()
	}
	if err != nil {
		log.Error("publish command result", "err", err)
	}
	return err
}

// publishEvent records a sandbox event; losing one is logged, not fatal.
func (w *Worker) publishEvent(ev schemas.Event) {
	ev.Time = time.Now().UTC()
	data, err := json.Marshal(ev)
	if err == nil {
		err = w.nc.Publish(schemas.SandboxEventSubject(ev.SandboxID), data)
	}
	if err != nil {
		w.log.Warn("publish event", "sandbox", ev.SandboxID, "kind", ev.Kind, "err", err)
	}
}

// keepAlive tells JetStream the command is still being worked on, every
// interval, until the returned func is called.
func keepAlive(msg jetstream.Msg, interval time.Duration) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// stoppedOr is nil when ctx is done (the error is the stop's doing) and err
// otherwise.
func stoppedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
