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

	"github.com/sandox/sandox/internal/egress"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/orchestrator/egressnet"
	"github.com/sandox/sandox/services/orchestrator/groupdb"
	"github.com/sandox/sandox/services/orchestrator/groups"
	"github.com/sandox/sandox/services/orchestrator/identity"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/lifetime"
	"github.com/sandox/sandox/services/orchestrator/locks"
	"github.com/sandox/sandox/services/orchestrator/placement"
	"github.com/sandox/sandox/services/orchestrator/pool"
	"github.com/sandox/sandox/services/orchestrator/routing"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/sandboxes"
	"github.com/sandox/sandox/services/orchestrator/state"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// Worker consumes lifecycle commands and carries them out: it decodes
// each command, routes it to the host that must run it, hands it to the
// part that runs it (package sandboxes for a sandbox's lifecycle) and
// publishes the result. NewWorker assembles the parts.
type Worker struct {
	cfg Config
	nc  *nats.Conn
	js  jetstream.JetStream
	rt  runtime.Runtime
	// imageStore lists and removes images for collection; nil never
	// collects.
	imageStore runtime.ImageStore
	store      *state.Store
	log        *slog.Logger
	// account is the worker's own NATS account, which must have issued
	// the callers it records as verified (see callerOf).
	account string
	// locks serialize the commands on one group or sandbox (package
	// locks).
	locks *locks.Keyed
	// sandboxes carries out the lifecycle of this host's sandboxes.
	sandboxes *sandboxes.Service
	// watcher follows the engine's events of this host's containers.
	watcher *sandboxes.Watcher
	// router sends each command to the host that must run it.
	router *routing.Router
	// groups carries out the group commands and create_sandbox.
	groups *groups.Service
	// pools hold this worker's warm sandboxes.
	pools *pool.Pools
	// hostName is the worker's host (Config.Host, or its engine's id):
	// its sandboxes are placed there and only its workers act on them.
	hostName string
	// lifetimes ends the sandboxes and groups whose lifetime is over.
	lifetimes *lifetime.Sweeper
	// hosts heartbeats the worker's host and marks silent hosts lost.
	hosts *placement.Hosts
	// placer chooses the host of each new sandbox.
	placer *placement.Placer
	// databases runs the groups' database containers.
	databases *groupdb.Databases
	// ids mints and revokes the sandboxes' NATS identities.
	ids *identity.Identities
}

// NewWorker sets up the streams and buckets and returns a worker that
// drives engine e. It does not consume until Run.
func NewWorker(ctx context.Context, nc *nats.Conn, e runtime.Engine, cfg Config, log *slog.Logger) (*Worker, error) {
	return newWorker(ctx, nc, e, cfg, sandboxes.OpenDisks(cfg.DisksDir), log)
}

// newWorker is NewWorker with the disk pool of the sandboxes' disk limits.
func newWorker(ctx context.Context, nc *nats.Conn, e runtime.Engine, cfg Config, disks sandboxes.DiskPool, log *slog.Logger) (*Worker, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	if err := waitForBus(ctx, cfg.BusWait, log, "streams and buckets", func(ctx context.Context) error {
		return state.SetupWith(ctx, js, cfg.Events, state.Replicas(nc, cfg.Replicas))
	}); err != nil {
		return nil, err
	}
	var st *state.Store
	if err := waitForBus(ctx, cfg.BusWait, log, "buckets", func(ctx context.Context) (err error) {
		st, err = state.OpenStore(ctx, js)
		return err
	}); err != nil {
		return nil, err
	}
	host, err := hostName(ctx, cfg, e.Runtime)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, nc: nc, js: js, rt: e.Runtime, imageStore: e.ImageStore, store: st, log: log.With("worker", cfg.Worker, "host", host),
		account: auth.AccountOf(ctx, nc), hostName: host, locks: &locks.Keyed{},
		ids: identity.New(nc, cfg.CredsDir, cfg.NATSSocket != "", sandboxes.UID)}
	proxies := &egress.Proxies{Dir: cfg.EgressDir, Log: w.log}
	// A new sandbox is placed on a host heard from within three
	// heartbeats, so that a host that has just died gets no creates while
	// it waits to be marked lost (HostLostAfter).
	w.placer = placement.New(st, host, min(3*cfg.HostHeartbeat, cfg.HostLostAfter))
	w.lifetimes = lifetime.New(st, js, w.publishEvent, cfg.LifetimeInterval, w.log)
	w.databases = groupdb.New(groupdb.Config{
		Network: cfg.DatabaseNetwork, System: cfg.System, Host: host,
		Neo4jImage: cfg.Neo4jImage, QdrantImage: cfg.QdrantImage, QdrantDataDir: cfg.QdrantDataDir,
		Neo4jPasswordFile: cfg.Neo4jPasswordFile, ReadyTimeout: cfg.DatabaseReadyTimeout, PopulateTimeout: cfg.PopulateTimeout,
	}, e.Runtime, e.Databases, st, nc, w.log)
	// Without a NATS socket there are no egress policies, so no bridges
	// of open egress to spread sandboxes over.
	var shards *egressnet.Shards
	if cfg.NATSSocket != "" {
		shards, err = egressnet.NewShards(e.Egress, egressnet.Options{Network: cfg.EgressNetwork, Capacity: cfg.EgressShardCapacity, Pool: cfg.EgressAddressPool, System: cfg.System})
		if err != nil {
			return nil, err
		}
	}
	isolation := egressnet.NewIsolation(cfg.NATSSocket, cfg.EgressNetwork, shards, proxies, w.log)
	cps, err := newCheckpoints(ctx, w, e.Archiver)
	if err != nil {
		return nil, err
	}
	w.sandboxes = sandboxes.New(sandboxConfig(cfg, host), sandboxes.Parts{
		Runtime: e.Runtime, Updater: e.Updater, Freezer: e.Freezer, Builder: images.NewBuilder(e.Runtime, cfg.SandboxImage),
		Store: st, Ledger: state.NewEngineLedger(st, e.Runtime), IDs: w.ids, Isolation: isolation, Egress: proxies,
		Disks: disks, Checkpoints: cps, Locks: w.locks, Publish: w.publishEvent,
	}, nc, w.log)
	w.hosts = placement.NewHosts(placement.HostsConfig{Worker: cfg.Worker, Host: host, Heartbeat: cfg.HostHeartbeat, LostAfter: cfg.HostLostAfter},
		st, e.Runtime, w.sandboxes.Host, hostLoss{w}, w.log)
	w.pools = pool.New(pool.Config{
		Worker: cfg.Worker, Host: host, Size: cfg.PoolSize, Compute: cfg.PoolCompute, Idle: cfg.PoolIdle,
		CanUpdate: e.Updater != nil, CredsDir: cfg.CredsDir,
	}, pool.Parts{Maker: w.sandboxes.PoolMaker(), Claimer: w.sandboxes.PoolClaimer(), Measure: w.sandboxes.Host, Egress: isolation}, st, nc, w.log)
	w.watcher = sandboxes.NewWatcher(w.sandboxes, w.pools, w.databases)
	w.router = routing.New(routing.Config{Host: host, Heartbeat: cfg.HostHeartbeat}, st, w.placer, w.hosts, js, nc, w.previousResult, w.log)
	w.groups = groups.New(groups.Config{Host: host, MaxToolFileBytes: cfg.MaxToolFileBytes, HostLostAfter: cfg.HostLostAfter}, groups.Parts{
		Store: st, Locks: w.locks, Sandboxes: w.sandboxes, Pools: w.pools, Databases: w.databases,
		Placer: w.placer, Hosts: w.hosts, Containers: e.Runtime, Delegator: w.router,
	})
	if err := disks.Err(); err != nil {
		w.log.Warn("disk limits are off", "err", err)
	}
	return w, nil
}

// sandboxConfig is what the sandbox lifecycle reads of cfg, on host.
func sandboxConfig(cfg Config, host string) sandboxes.Config {
	return sandboxes.Config{
		Worker: cfg.Worker, Host: host, System: cfg.System, Network: cfg.Network, SandboxNATSURL: cfg.SandboxNATSURL,
		CredsDir: cfg.CredsDir, DisksDir: cfg.DisksDir, Runtime: cfg.Runtime, TmpSize: cfg.TmpSize, ShmSize: cfg.ShmSize,
		StreamBudget: cfg.StreamBudget, WebhookAllow: cfg.WebhookAllow, MaxToolFileBytes: cfg.MaxToolFileBytes,
		ReadyTimeout: cfg.ReadyTimeout, RestartGrace: cfg.RestartGrace,
	}
}

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
	stopRequests, err := w.serveRequests(ctx)
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
