package orchestrator

import (
	"os"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/egressnet"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// Config configures a Worker.
type Config struct {
	// Worker names this worker in results and logs.
	Worker string
	// Host names the orchestrator host this worker belongs to: one Docker
	// engine and the workers that drive it. Sandboxes are placed on hosts,
	// and only a host's workers act on its sandboxes. It must be a NATS
	// subject token; "" takes the engine's id (made one), so that a
	// single-engine setup needs nothing.
	Host string
	// HostHeartbeat is how often the worker refreshes its host's record in
	// schemas.HostsBucket.
	HostHeartbeat time.Duration
	// HostLostAfter is how long a host may go without a heartbeat before
	// a worker of another host marks it and its sandboxes lost.
	HostLostAfter time.Duration
	// System names the sandox system the worker belongs to; its
	// containers and volumes carry it in LabelSystem, so that `sandox
	// down` or a test's teardown removes only its own. "" sets no label.
	System string
	// SandboxImage is the default sandbox image every sandbox builds on.
	SandboxImage string
	// Network is the Docker network sandbox containers join; NATS must be
	// reachable from it at SandboxNATSURL.
	Network string
	// SandboxNATSURL is the NATS URL as a sandbox container sees it; a
	// unix:// URL names the socket under egressnet.SandboxNATSDir.
	SandboxNATSURL string
	// NATSSocket is a Docker volume name, or an absolute host directory,
	// holding the NATS server's Unix socket. When set, sandboxes run with
	// no network and this mounted read-only at egressnet.SandboxNATSDir. "" puts
	// them on Network instead.
	NATSSocket string
	// Concurrency is how many commands the worker handles at once.
	Concurrency int
	// ReadyTimeout bounds how long a started sandbox may take to answer.
	ReadyTimeout time.Duration
	// RestartGrace is how long a sandbox's container that died may take to
	// run again before the die is taken for a crash: the die of another
	// worker's docker restart is followed by a start within moments.
	RestartGrace time.Duration
	// BusWait is how long a starting worker waits for JetStream to answer
	// (a cluster electing the leaders of the streams and buckets after a
	// node died) before it gives up. 0 tries once.
	BusWait time.Duration
	// AckWait is how long a command may go without a sign of progress
	// before JetStream redelivers it to another worker.
	AckWait time.Duration
	// MaxToolFileBytes bounds one user tool file.
	MaxToolFileBytes int
	// DisksDir holds the disk images of sandboxes with a disk limit; ""
	// turns disk limits off (a request for one is refused).
	DisksDir string
	// CredsDir holds each sandbox's NATS credentials file, bound read-only
	// into its container; it must be the same path on the Docker host. ""
	// gives sandboxes no identity, which works only with an open server.
	CredsDir string
	// EgressDir holds the Unix sockets of the allowlist proxies, one per
	// sandbox, each bound into its sandbox; the same path on the Docker
	// host.
	EgressDir string
	// EgressNetwork is the Docker network of sandboxes whose egress is
	// open: a bridge with inter-container traffic off. It is the first of
	// their bridges; when it is full they go on EgressNetwork-1,
	// EgressNetwork-2, … (docs/security.md, "Open egress at density").
	EgressNetwork string
	// EgressShardCapacity is how many containers one bridge of open
	// egress holds before the next one is used (at most egressnet.BridgePortLimit,
	// and what a subnet of EgressAddressPool addresses); 0 puts every
	// such sandbox on EgressNetwork alone.
	EgressShardCapacity int
	// EgressAddressPool is where the bridges of open egress that the
	// worker creates take their subnets.
	EgressAddressPool egressnet.AddressPool
	// Runtime is the OCI runtime sandboxes run under (the engine must know
	// it, e.g. runsc or kata-runtime); "" is the engine's default.
	Runtime string
	// TmpSize is the size of a sandbox's /tmp (a tmpfs, counted in its memory).
	TmpSize string
	// DatabaseNetwork is the Docker network of the groups' database
	// containers: the data service reaches them there, sandboxes are never
	// on it.
	DatabaseNetwork string
	// Neo4jImage and QdrantImage run a group's databases (build.Neo4j and
	// the Qdrant-compatible image); "" refuses groups that need them.
	Neo4jImage, QdrantImage string
	// QdrantDataDir is where the Qdrant image keeps its data, the
	// volume's mount point: /data for the Qdrant-compatible service,
	// /qdrant/storage for Qdrant's own image.
	QdrantDataDir string
	// Neo4jPasswordFile is the host path of the neo4j user's password,
	// bound read-only into every Neo4j container; the data service reads
	// the same secret.
	Neo4jPasswordFile string
	// DatabaseReadyTimeout bounds how long a database may take to answer.
	DatabaseReadyTimeout time.Duration
	// PopulateTimeout bounds a group's population at start.
	PopulateTimeout time.Duration
	// ShmSize is the size of a sandbox's /dev/shm (a tmpfs, counted in its
	// memory), where POSIX shared memory and semaphores live.
	ShmSize string
	// Events bounds what the audit log SANDOX_EVENTS keeps.
	Events state.Retention
	// Replicas is how many copies of each stream and bucket the cluster
	// keeps; 0 chooses (see Replicas).
	Replicas int
	// LifetimeInterval is how often the worker looks for sandboxes and
	// groups whose TTL or idle timeout is over.
	LifetimeInterval time.Duration
	// ImageGC says when unused sandbox-tools images are removed.
	ImageGC images.GC
	// PoolSize is how many sandboxes of the default shape the worker keeps
	// started and ready to be claimed (docs/pools.md); 0 turns the warm
	// pool off.
	PoolSize int
	// PoolIdle empties a pool after this long without a create it could
	// serve (a group's pool may set its own); 0 never does. The next such
	// create fills it again.
	PoolIdle time.Duration
	// PoolCompute are the resources of a pooled sandbox, held in the
	// ledger while it waits; the zero value is the default sandbox's (no
	// CPU or memory limit).
	PoolCompute schemas.ComputeResources
	// StreamBudget is how many bytes of job output and watch events one
	// sandbox may put into JetStream in its life (schemas.ExecutorEnv
	// StreamBytes): a sandbox that writes without end then stops at an
	// explicit truncated record instead of filling the streams for every
	// other. 0 is no limit.
	StreamBudget int64
	// WebhookAllow are the URL prefixes a job's webhook may name
	// (schemas.WebhookAllowed): the worker posts job exits to those
	// (package webhook), and sandboxes refuse others at start_job. Empty
	// allows none.
	WebhookAllow []string
}

// DefaultStreamBudget is a sandbox's stream budget by default: 256 MiB,
// a quarter of what SANDOX_JOBS keeps in all.
const DefaultStreamBudget = 256 << 20

// DefaultConfig returns the configuration of a single local worker.
func DefaultConfig() Config {
	host, _ := os.Hostname()
	return Config{
		Worker:               "orchestrator-" + host,
		SandboxImage:         "sandox/sandbox:latest",
		Network:              "sandox",
		SandboxNATSURL:       "unix://" + egressnet.SandboxNATSDir + "/nats.sock",
		NATSSocket:           "sandox-nats-socket",
		HostHeartbeat:        2 * time.Second,
		HostLostAfter:        30 * time.Second,
		Concurrency:          4,
		ReadyTimeout:         60 * time.Second,
		RestartGrace:         2 * time.Second,
		AckWait:              30 * time.Second,
		BusWait:              time.Minute,
		MaxToolFileBytes:     1 << 20,
		DisksDir:             "/var/lib/sandox/disks",
		CredsDir:             "/var/lib/sandox/creds",
		EgressDir:            "/var/lib/sandox/egress",
		EgressNetwork:        "sandox-egress",
		EgressShardCapacity:  1000,
		EgressAddressPool:    egressnet.DefaultAddressPool(),
		TmpSize:              "256m",
		ShmSize:              "64m",
		DatabaseNetwork:      "sandox-data",
		QdrantDataDir:        "/data",
		DatabaseReadyTimeout: 2 * time.Minute,
		PopulateTimeout:      10 * time.Minute,
		Events:               state.DefaultRetention(),
		LifetimeInterval:     5 * time.Second,
		ImageGC:              images.DefaultGC(),
		PoolIdle:             10 * time.Minute,
		StreamBudget:         DefaultStreamBudget,
	}
}
