// Command sandox-orchestrator runs an orchestrator worker: it consumes
// sandox lifecycle commands from NATS JetStream and drives the Docker engine.
// Run several to share the work.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/internal/svcmain"
	"github.com/sandox/sandox/services/orchestrator"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(ctx, os.Args[1:], log); err != nil {
		log.Error("orchestrator stopped", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, log *slog.Logger) error {
	cfg := orchestrator.DefaultConfig()
	fs := flag.NewFlagSet("sandox-orchestrator", flag.ContinueOnError)
	natsURL := fs.String("nats", envOr("SANDOX_NATS_URL", nats.DefaultURL), "NATS URL of this worker, or a comma-separated list of a cluster's (env SANDOX_NATS_URL)")
	creds := fs.String("creds", os.Getenv("SANDOX_NATS_CREDS"), "NATS credentials file (env SANDOX_NATS_CREDS)")
	fs.StringVar(&cfg.Worker, "name", envOr("SANDOX_WORKER", cfg.Worker), "worker name, used in results (worker) and logs (env SANDOX_WORKER)")
	fs.StringVar(&cfg.Host, "host", os.Getenv("SANDOX_HOST"), "name of this worker's host (its Docker engine), a NATS subject token; \"\" takes the engine's id (env SANDOX_HOST)")
	fs.DurationVar(&cfg.HostHeartbeat, "host-heartbeat", cfg.HostHeartbeat, "how often the worker refreshes its host's record (env SANDOX_HOST_HEARTBEAT)")
	fs.DurationVar(&cfg.HostLostAfter, "host-lost-after", cfg.HostLostAfter, "a host with no heartbeat for this long is marked lost with its sandboxes (env SANDOX_HOST_LOST_AFTER)")
	fs.DurationVar(&cfg.BusWait, "bus-wait", cfg.BusWait, "how long to wait at start for JetStream to answer (a cluster electing leaders) before giving up (env SANDOX_BUS_WAIT)")
	fs.StringVar(&cfg.System, "system", os.Getenv("SANDOX_SYSTEM"), "name of this sandox system, set as the label dev.sandox.system on its sandboxes (env SANDOX_SYSTEM)")
	fs.StringVar(&cfg.SandboxImage, "sandbox-image", cfg.SandboxImage, "default sandbox image, which every sandbox image builds FROM (env SANDOX_SANDBOX_IMAGE)")
	fs.StringVar(&cfg.Network, "network", cfg.Network, "Docker network of sandbox containers (env SANDOX_NETWORK)")
	fs.StringVar(&cfg.SandboxNATSURL, "sandbox-nats", envOr("SANDOX_SANDBOX_NATS_URL", cfg.SandboxNATSURL), "NATS URL as sandboxes see it; a comma-separated list of sockets, one per node, lets an executor move to the next when its node dies, the first preferred (env SANDOX_SANDBOX_NATS_URL)")
	fs.StringVar(&cfg.NATSSocket, "nats-socket", envOr("SANDOX_NATS_SOCKET", cfg.NATSSocket), "Docker volume (or absolute host directory) with the NATS socket; sandboxes then have no network and it mounted read-only at /run/sandox-nats; \"\" puts them on -network (env SANDOX_NATS_SOCKET)")
	fs.StringVar(&cfg.EgressDir, "egress-dir", envOr("SANDOX_EGRESS_DIR", cfg.EgressDir), "directory of the allowlist proxies' sockets, the same path on the Docker host (env SANDOX_EGRESS_DIR)")
	fs.StringVar(&cfg.EgressNetwork, "egress-network", cfg.EgressNetwork, "Docker network of sandboxes with open egress (a bridge with inter-container traffic off); when full, the next go on NAME-1, NAME-2, … (env SANDOX_EGRESS_NETWORK)")
	fs.IntVar(&cfg.EgressShardCapacity, "egress-shard-capacity", cfg.EgressShardCapacity, "containers per bridge of open egress before the next bridge is used (a Linux bridge holds 1023); 0 puts them all on -egress-network (env SANDOX_EGRESS_SHARD_CAPACITY)")
	fs.StringVar(&cfg.EgressAddressPool.Base, "egress-pool", cfg.EgressAddressPool.Base, "address range of the bridges of open egress that the orchestrator creates (env SANDOX_EGRESS_POOL)")
	fs.IntVar(&cfg.EgressAddressPool.Size, "egress-pool-size", cfg.EgressAddressPool.Size, "prefix length of each such bridge's subnet, cut from -egress-pool (env SANDOX_EGRESS_POOL_SIZE)")
	fs.StringVar(&cfg.Runtime, "runtime", os.Getenv("SANDOX_RUNTIME"), "OCI runtime of sandboxes, e.g. runsc or kata-runtime, registered in the engine; \"\" is the engine's default (env SANDOX_RUNTIME)")
	fs.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "commands handled (and pulled) at once (env SANDOX_CONCURRENCY)")
	fs.StringVar(&cfg.DisksDir, "disks", envOr("SANDOX_DISKS_DIR", cfg.DisksDir), "directory of sandbox disk images; \"\" turns disk limits off (env SANDOX_DISKS_DIR)")
	fs.StringVar(&cfg.CredsDir, "creds-dir", envOr("SANDOX_CREDS_DIR", cfg.CredsDir), "directory of the sandboxes' NATS credentials (each written for uid 10001, mode 0400, and bound into its sandbox), the same path on the Docker host (env SANDOX_CREDS_DIR)")
	fs.DurationVar(&cfg.ReadyTimeout, "ready-timeout", cfg.ReadyTimeout, "how long a started sandbox may take to answer its ping (env SANDOX_READY_TIMEOUT)")
	fs.DurationVar(&cfg.RestartGrace, "restart-grace", cfg.RestartGrace, "how long a sandbox container that died may take to run again (another worker's restart) before it counts as a crash (env SANDOX_RESTART_GRACE)")
	fs.StringVar(&cfg.DatabaseNetwork, "database-network", envOr("SANDOX_DATABASE_NETWORK", cfg.DatabaseNetwork), "Docker network of the groups' databases, never a sandbox's (env SANDOX_DATABASE_NETWORK)")
	fs.StringVar(&cfg.Neo4jImage, "neo4j-image", os.Getenv("SANDOX_NEO4J_IMAGE"), "image of the groups' Neo4j (env SANDOX_NEO4J_IMAGE)")
	fs.StringVar(&cfg.QdrantImage, "qdrant-image", os.Getenv("SANDOX_QDRANT_IMAGE"), "image of the groups' Qdrant-compatible service (env SANDOX_QDRANT_IMAGE)")
	fs.StringVar(&cfg.QdrantDataDir, "qdrant-data-dir", envOr("SANDOX_QDRANT_DATA_DIR", cfg.QdrantDataDir), "where the Qdrant image keeps its data (env SANDOX_QDRANT_DATA_DIR)")
	fs.StringVar(&cfg.Neo4jPasswordFile, "neo4j-password-file", os.Getenv("SANDOX_NEO4J_PASSWORD_FILE"), "host path of the neo4j password, bound into every Neo4j (env SANDOX_NEO4J_PASSWORD_FILE)")
	fs.IntVar(&cfg.Replicas, "replicas", 0, "copies of each stream and bucket; 0 is 3 on a cluster of three or more nodes, else 1 (env SANDOX_REPLICAS)")
	fs.DurationVar(&cfg.Events.MaxAge, "events-max-age", cfg.Events.MaxAge, "how long the audit log SANDOX_EVENTS keeps events; 0 keeps them for ever (env SANDOX_EVENTS_MAX_AGE)")
	fs.Int64Var(&cfg.Events.MaxBytes, "events-max-bytes", cfg.Events.MaxBytes, "how many bytes of events SANDOX_EVENTS keeps (oldest dropped first); 0 is no limit (env SANDOX_EVENTS_MAX_BYTES)")
	fs.DurationVar(&cfg.ImageGC.Interval, "image-gc-interval", cfg.ImageGC.Interval, "how often unused sandbox-tools images are garbage-collected; 0 turns it off (env SANDOX_IMAGE_GC_INTERVAL)")
	fs.DurationVar(&cfg.ImageGC.MaxAge, "image-gc-max-age", cfg.ImageGC.MaxAge, "unused sandbox-tools images built longer ago than this are removed (env SANDOX_IMAGE_GC_MAX_AGE)")
	fs.IntVar(&cfg.ImageGC.Keep, "image-gc-keep", cfg.ImageGC.Keep, "how many of the newest sandbox-tools images are kept unless too old (env SANDOX_IMAGE_GC_KEEP)")
	fs.IntVar(&cfg.PoolSize, "pool", cfg.PoolSize, "sandboxes of the default shape kept started and ready to be claimed; 0 turns the warm pool off (env SANDOX_POOL_SIZE)")
	fs.DurationVar(&cfg.PoolIdle, "pool-idle", cfg.PoolIdle, "empty the warm pool after this long without a create; 0 never does (env SANDOX_POOL_IDLE)")
	fs.Int64Var(&cfg.StreamBudget, "stream-budget", cfg.StreamBudget, "bytes of job output and watch events one sandbox may put into JetStream in its life, after which its jobs and watches end in a truncated record; 0 is no limit (env SANDOX_STREAM_BUDGET)")
	fs.Func("webhook-allow", "comma-separated URL prefixes (https://hooks.example.com/ci/) that jobs' webhooks may name; the worker posts job exits there; none by default (env SANDOX_WEBHOOK_ALLOW)", func(v string) error {
		cfg.WebhookAllow = nil
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); u != "" {
				cfg.WebhookAllow = append(cfg.WebhookAllow, u)
			}
		}
		return nil
	})
	// Every flag whose usage names a variable takes its default from it,
	// so that each setting can come from a container's environment.
	if err := svcmain.EnvDefaults(fs, os.Getenv); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.PoolSize < 0 {
		return fmt.Errorf("-pool %d: want a count of sandboxes", cfg.PoolSize)
	}

	rt, err := docker.New(ctx)
	if err != nil {
		return err
	}
	defer rt.Close()

	opts := []nats.Option{nats.Name(cfg.Worker), nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second)}
	if *creds != "" {
		opts = append(opts, nats.UserCredentials(*creds))
	}
	nc, err := nats.Connect(*natsURL, opts...)
	if err != nil {
		return fmt.Errorf("connect to NATS at %s: %w", *natsURL, err)
	}
	defer nc.Drain()

	w, err := orchestrator.NewWorker(ctx, nc, docker.NewRuntime(rt).Engine(), cfg, log)
	if err != nil {
		return err
	}
	return w.Run(ctx)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
