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
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/services/docker"
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
	fs.StringVar(&cfg.Worker, "name", envOr("SANDOX_WORKER", cfg.Worker), "worker name")
	fs.StringVar(&cfg.Host, "host", os.Getenv("SANDOX_HOST"), "name of this worker's host (its Docker engine), a NATS subject token; \"\" takes the engine's id (env SANDOX_HOST)")
	fs.DurationVar(&cfg.HostHeartbeat, "host-heartbeat", cfg.HostHeartbeat, "how often the worker refreshes its host's record")
	fs.DurationVar(&cfg.HostLostAfter, "host-lost-after", cfg.HostLostAfter, "a host with no heartbeat for this long is marked lost with its sandboxes")
	fs.DurationVar(&cfg.BusWait, "bus-wait", cfg.BusWait, "how long to wait at start for JetStream to answer (a cluster electing leaders) before giving up")
	fs.StringVar(&cfg.System, "system", os.Getenv("SANDOX_SYSTEM"), "name of this sandox system, set as the label dev.sandox.system on its sandboxes (env SANDOX_SYSTEM)")
	fs.StringVar(&cfg.SandboxImage, "sandbox-image", cfg.SandboxImage, "default sandbox image")
	fs.StringVar(&cfg.Network, "network", cfg.Network, "Docker network of sandbox containers")
	fs.StringVar(&cfg.SandboxNATSURL, "sandbox-nats", envOr("SANDOX_SANDBOX_NATS_URL", cfg.SandboxNATSURL), "NATS URL as sandboxes see it (env SANDOX_SANDBOX_NATS_URL)")
	fs.StringVar(&cfg.NATSSocket, "nats-socket", envOr("SANDOX_NATS_SOCKET", cfg.NATSSocket), "Docker volume (or absolute host directory) with the NATS socket; sandboxes then have no network; \"\" puts them on -network (env SANDOX_NATS_SOCKET)")
	fs.StringVar(&cfg.EgressDir, "egress-dir", envOr("SANDOX_EGRESS_DIR", cfg.EgressDir), "directory of the allowlist proxies' sockets, the same path on the Docker host (env SANDOX_EGRESS_DIR)")
	fs.StringVar(&cfg.EgressNetwork, "egress-network", cfg.EgressNetwork, "Docker network of sandboxes with open egress (a bridge with inter-container traffic off); when full, the next go on NAME-1, NAME-2, …")
	fs.IntVar(&cfg.EgressShardCapacity, "egress-shard-capacity", cfg.EgressShardCapacity, "containers per bridge of open egress before the next bridge is used (a Linux bridge holds 1023); 0 puts them all on -egress-network")
	fs.StringVar(&cfg.EgressAddressPool.Base, "egress-pool", cfg.EgressAddressPool.Base, "address range of the bridges of open egress that the orchestrator creates")
	fs.IntVar(&cfg.EgressAddressPool.Size, "egress-pool-size", cfg.EgressAddressPool.Size, "prefix length of each such bridge's subnet, cut from -egress-pool")
	fs.StringVar(&cfg.Runtime, "runtime", os.Getenv("SANDOX_RUNTIME"), "OCI runtime of sandboxes, e.g. runsc or kata-runtime; \"\" is the engine's default (env SANDOX_RUNTIME)")
	fs.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "commands handled at once")
	fs.StringVar(&cfg.DisksDir, "disks", envOr("SANDOX_DISKS_DIR", cfg.DisksDir), "directory of sandbox disk images; \"\" turns disk limits off (env SANDOX_DISKS_DIR)")
	fs.StringVar(&cfg.CredsDir, "creds-dir", envOr("SANDOX_CREDS_DIR", cfg.CredsDir), "directory of the sandboxes' NATS credentials, the same path on the Docker host (env SANDOX_CREDS_DIR)")
	fs.DurationVar(&cfg.ReadyTimeout, "ready-timeout", cfg.ReadyTimeout, "how long a sandbox may take to start")
	fs.DurationVar(&cfg.RestartGrace, "restart-grace", cfg.RestartGrace, "how long a sandbox container that died may take to run again before it counts as a crash (another worker's restart)")
	fs.StringVar(&cfg.DatabaseNetwork, "database-network", envOr("SANDOX_DATABASE_NETWORK", cfg.DatabaseNetwork), "Docker network of the groups' databases, never a sandbox's (env SANDOX_DATABASE_NETWORK)")
	fs.StringVar(&cfg.Neo4jImage, "neo4j-image", os.Getenv("SANDOX_NEO4J_IMAGE"), "image of the groups' Neo4j (env SANDOX_NEO4J_IMAGE)")
	fs.StringVar(&cfg.QdrantImage, "qdrant-image", os.Getenv("SANDOX_QDRANT_IMAGE"), "image of the groups' Qdrant-compatible service (env SANDOX_QDRANT_IMAGE)")
	fs.StringVar(&cfg.QdrantDataDir, "qdrant-data-dir", envOr("SANDOX_QDRANT_DATA_DIR", cfg.QdrantDataDir), "where the Qdrant image keeps its data (env SANDOX_QDRANT_DATA_DIR)")
	fs.StringVar(&cfg.Neo4jPasswordFile, "neo4j-password-file", os.Getenv("SANDOX_NEO4J_PASSWORD_FILE"), "host path of the neo4j password, bound into every Neo4j (env SANDOX_NEO4J_PASSWORD_FILE)")
	fs.IntVar(&cfg.Replicas, "replicas", 0, "copies of each stream and bucket; 0 is 3 on a cluster of three or more nodes, else 1")
	fs.DurationVar(&cfg.Events.MaxAge, "events-max-age", cfg.Events.MaxAge, "how long the audit log SANDOX_EVENTS keeps events; 0 keeps them for ever")
	fs.Int64Var(&cfg.Events.MaxBytes, "events-max-bytes", cfg.Events.MaxBytes, "how many bytes of events SANDOX_EVENTS keeps (oldest dropped first); 0 is no limit")
	fs.DurationVar(&cfg.ImageGC.Interval, "image-gc-interval", cfg.ImageGC.Interval, "how often unused sandbox-tools images are garbage-collected; 0 turns it off")
	fs.DurationVar(&cfg.ImageGC.MaxAge, "image-gc-max-age", cfg.ImageGC.MaxAge, "unused sandbox-tools images built longer ago than this are removed")
	fs.IntVar(&cfg.ImageGC.Keep, "image-gc-keep", cfg.ImageGC.Keep, "how many of the newest sandbox-tools images are kept unless too old")
	fs.IntVar(&cfg.PoolSize, "pool", cfg.PoolSize, "sandboxes of the default shape kept started and ready to be claimed; 0 turns the warm pool off (env SANDOX_POOL_SIZE)")
	fs.DurationVar(&cfg.PoolIdle, "pool-idle", cfg.PoolIdle, "empty the warm pool after this long without a create; 0 never does")
	if v := os.Getenv("SANDOX_POOL_SIZE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("SANDOX_POOL_SIZE=%q: want a count of sandboxes", v)
		}
		cfg.PoolSize = n
	}
	if err := fs.Parse(args); err != nil {
		return err
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
