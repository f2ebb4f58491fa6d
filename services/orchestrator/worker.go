package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/egress"
)

// Worker consumes lifecycle commands and carries them out.
type Worker struct {
	cfg   Config
	nc    *nats.Conn
	js    jetstream.JetStream
	rt    Runtime
	store *store
	log   *slog.Logger
	locks keyedMutex
	disks diskPool
	// egress runs the allowlist proxies of this worker's sandboxes.
	egress egress.Proxies
	// engine caches the ledger key of the engine (see engineKey).
	engine struct {
		mu  sync.Mutex
		key string
	}
}

// NewWorker sets up the streams and buckets and returns a worker. It does
// not consume until Run.
func NewWorker(ctx context.Context, nc *nats.Conn, rt Runtime, cfg Config, log *slog.Logger) (*Worker, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	if err := Setup(ctx, js); err != nil {
		return nil, err
	}
	st, err := openStore(ctx, js)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, nc: nc, js: js, rt: rt, store: st, log: log.With("worker", cfg.Worker), disks: newDiskPool(cfg.DisksDir)}
	w.egress.Dir, w.egress.Log = cfg.EgressDir, w.log
	if err := w.disks.err; err != nil {
		w.log.Warn("disk limits are off", "err", err)
	}
	return w, nil
}

// Run consumes commands until ctx is done, handling up to cfg.Concurrency
// at once; then it stops fetching, waits for the commands in hand to
// finish, and returns.
func (w *Worker) Run(ctx context.Context) error {
	cons, err := w.js.CreateOrUpdateConsumer(ctx, schemas.CommandStream, jetstream.ConsumerConfig{
		Durable:       schemas.CommandConsumer,
		Description:   "orchestrator workers share this consumer",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       w.cfg.AckWait,
		MaxDeliver:    5,
		MaxAckPending: 256,
	})
	if err != nil {
		return fmt.Errorf("consumer %s: %w", schemas.CommandConsumer, err)
	}
	iter, err := cons.Messages(jetstream.PullMaxMessages(w.cfg.Concurrency))
	if err != nil {
		return fmt.Errorf("consume %s: %w", schemas.CommandStream, err)
	}
	w.reconcileDisks(ctx)
	w.log.Info("orchestrator worker consuming", "stream", schemas.CommandStream, "concurrency", w.cfg.Concurrency)
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		w.watch(wctx)
	}()
	defer func() {
		stopWatch()
		<-watched
	}()

	var wg sync.WaitGroup
	slots := make(chan struct{}, w.cfg.Concurrency)
	go func() {
		<-ctx.Done()
		iter.Drain()
	}()
	for {
		msg, err := iter.Next()
		if err != nil {
			wg.Wait()
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return fmt.Errorf("next command: %w", err)
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			// A command in hand is finished even when the worker is told
			// to stop, so that its requester gets an answer.
			w.handle(context.WithoutCancel(ctx), msg)
		}()
	}
}

// handle runs one command message: decode, dedupe, execute, publish the
// result, then acknowledge.
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg) {
	var cmd schemas.Command
	if err := json.Unmarshal(msg.Data(), &cmd); err != nil || cmd.ID == "" {
		w.log.Error("poison command: not a command message", "subject", msg.Subject(), "err", err)
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

	stop := keepAlive(msg, w.cfg.AckWait/3)
	start := time.Now()
	res := w.execute(ctx, msg.Data(), cmd)
	stop()
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

// execute validates and dispatches a command, turning every failure into
// the result's wire error.
func (w *Worker) execute(ctx context.Context, raw []byte, cmd schemas.Command) (res schemas.CommandResult) {
	defer func() {
		if p := recover(); p != nil {
			res = schemas.CommandResult{Error: schemas.Errorf(schemas.CodeInternal, "orchestrator panicked: %v", p)}
		}
	}()
	if err := schemas.Validate("command", raw); err != nil {
		return schemas.CommandResult{Error: wireError(err)}
	}
	var err error
	switch cmd.Kind {
	case schemas.CreateGroup:
		res, err = w.createGroup(ctx, cmd)
	case schemas.StartGroup:
		res, err = w.startGroup(ctx, cmd)
	case schemas.EndGroup:
		res, err = w.endGroup(ctx, cmd)
	case schemas.CreateSandbox:
		res, err = w.createSandbox(ctx, cmd)
	case schemas.StartSandbox:
		res, err = w.startSandbox(ctx, cmd)
	case schemas.EndSandbox:
		res, err = w.endSandbox(ctx, cmd)
	case schemas.SandboxStats:
		res, err = w.sandboxStats(ctx, cmd)
	default:
		err = schemas.Errorf(schemas.CodeBadRequest, "unknown command kind %q", cmd.Kind)
	}
	if err != nil {
		res.Error = wireError(err)
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

func wireError(err error) *schemas.Error {
	var we *schemas.Error
	if errors.As(err, &we) {
		return we
	}
	return &schemas.Error{Code: schemas.CodeInternal, Message: err.Error()}
}

// keyedMutex serializes the commands on one group or sandbox within a worker.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = make(map[string]*sync.Mutex)
	}
	l, ok := k.locks[key]
	if !ok {
		l = &sync.Mutex{}
		k.locks[key] = l
	}
	k.mu.Unlock()
	l.Lock()
	return l.Unlock
}
