// Package sandboxes is the orchestrator's sandbox lifecycle on one host:
// it makes, starts, ends, forgets, pauses and resumes sandboxes, builds
// their container spec, waits for their executors to be ready, gives them
// disks, follows the engine's events of their containers (OOM kills,
// exits, restarts), reconciles what sandboxes that no longer exist left
// behind, takes their checkpoints and makes the warm pools' sandboxes.
// The command layer (package orchestrator) decodes, routes and answers
// commands; a Service carries out the sandbox commands of its host.
package sandboxes

import (
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/internal/egress"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/checkpoints"
	"github.com/sandox/sandox/services/orchestrator/egressnet"
	"github.com/sandox/sandox/services/orchestrator/identity"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/locks"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// Config is what a Service reads of the orchestrator's configuration; the
// orchestrator's Config documents each field.
type Config struct {
	// Worker names the worker (a pooled sandbox records its worker).
	Worker string
	// Host is the worker's host: the sandboxes it makes are placed there,
	// and it acts only on those placed there.
	Host             string
	System           string
	Network          string
	SandboxNATSURL   string
	CredsDir         string
	DisksDir         string
	Runtime          string
	TmpSize          string
	ShmSize          string
	StreamBudget     int64
	WebhookAllow     []string
	MaxToolFileBytes int
	ReadyTimeout     time.Duration
	RestartGrace     time.Duration
}

// Parts are what a Service acts through. Updater, Freezer and Checkpoints
// may be nil: claims from a pool are then served only with the pool's own
// resources, and pause, resume and the checkpoint commands are refused as
// unsupported.
type Parts struct {
	Runtime     runtime.Runtime
	Updater     runtime.ResourceUpdater
	Freezer     runtime.Freezer
	Builder     *images.Builder
	Store       *state.Store
	Ledger      *state.EngineLedger
	IDs         *identity.Identities
	Isolation   *egressnet.Isolation
	Egress      *egress.Proxies
	Disks       DiskPool
	Checkpoints *checkpoints.Service
	// Locks serialize the commands on one sandbox (package locks says in
	// which order they are taken).
	Locks *locks.Keyed
	// Publish records a sandbox event; it must not block for long.
	Publish func(schemas.Event)
}

// Service carries out the sandbox lifecycle of one host. It is safe for
// concurrent use: the commands on one sandbox take its lock.
type Service struct {
	cfg         Config
	nc          *nats.Conn
	log         *slog.Logger
	rt          runtime.Runtime
	updater     runtime.ResourceUpdater
	freezer     runtime.Freezer
	builder     *images.Builder
	store       *state.Store
	ledger      *state.EngineLedger
	ids         *identity.Identities
	isolation   *egressnet.Isolation
	egress      *egress.Proxies
	disks       DiskPool
	checkpoints *checkpoints.Service
	locks       *locks.Keyed
	publish     func(schemas.Event)
}

// New returns the sandbox lifecycle of cfg.Host over parts. nc asks the
// sandboxes' executors (readiness, hold, disk use) and publishes build
// progress.
func New(cfg Config, parts Parts, nc *nats.Conn, log *slog.Logger) *Service {
	return &Service{
		cfg: cfg, nc: nc, log: log,
		rt: parts.Runtime, updater: parts.Updater, freezer: parts.Freezer, builder: parts.Builder,
		store: parts.Store, ledger: parts.Ledger, ids: parts.IDs, isolation: parts.Isolation, egress: parts.Egress,
		disks: parts.Disks, checkpoints: parts.Checkpoints, locks: parts.Locks, publish: parts.Publish,
	}
}

// here reports whether a sandbox placed on host is this service's to act
// on: one of its host, or one recorded before placement (no host), as
// placement.Hosts.Here.
func (s *Service) here(host string) bool { return host == "" || host == s.cfg.Host }
