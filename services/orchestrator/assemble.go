package orchestrator

import (
	"context"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/internal/egress"
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
	"github.com/sandox/sandox/services/orchestrator/requests"
	"github.com/sandox/sandox/services/orchestrator/routing"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/sandboxes"
	"github.com/sandox/sandox/services/orchestrator/state"
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
	// requests answers the status and stats requests.
	requests *requests.Server
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
	w.requests = requests.New(requests.Config{Worker: cfg.Worker, Host: host}, nc, st, w.hosts, w.sandboxes, w.log)
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
