package placement

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// Lost is what the orchestrator does for the hosts part when a host is
// lost or comes back.
type Lost interface {
	// MarkLost sets sandbox id lost for reason, with an exited event,
	// unless it is ending, ended or lost already, or (when container is
	// not "") its record names another container. It reports whether it
	// did.
	MarkLost(ctx context.Context, id, container, reason, detail string) bool
	// FailQueued answers the commands waiting for lost host with
	// CodeUnavailable.
	FailQueued(ctx context.Context, host string) error
	// Back removes what was lost on this host, after its record was found
	// lost at a heartbeat (the host was silent and came back).
	Back(ctx context.Context)
}

// HostsConfig is a worker's view of the hosts.
type HostsConfig struct {
	// Worker is the worker's name, recorded among its host's workers.
	Worker string
	// Host is the worker's host.
	Host string
	// Heartbeat is how often the worker refreshes its host's record and
	// looks for lost hosts.
	Heartbeat time.Duration
	// LostAfter is how long a host may stay silent before it is lost.
	LostAfter time.Duration
}

// Hosts keeps the worker's host record alive in the hosts bucket and
// marks lost the other hosts that fall silent. It is safe for concurrent
// use.
type Hosts struct {
	cfg     HostsConfig
	store   *state.Store
	engine  runtime.HostReader
	measure func(context.Context) (resources.Host, error)
	lost    Lost
	log     *slog.Logger
}

// NewHosts returns the hosts part of cfg. engine names the engine (its id
// keys the host's ledger), measure gives the host's capacity, and lost is
// told of lost sandboxes and hosts. It does nothing until Run or
// Heartbeat.
func NewHosts(cfg HostsConfig, store *state.Store, engine runtime.HostReader, measure func(context.Context) (resources.Host, error), lost Lost, log *slog.Logger) *Hosts {
	return &Hosts{cfg: cfg, store: store, engine: engine, measure: measure, lost: lost, log: log}
}

// Here reports whether a sandbox placed on host is this worker's to act
// on: its own host, or "" (a record from before placement, which belongs
// to the single host there was).
func (h *Hosts) Here(host string) bool { return host == "" || host == h.cfg.Host }

// Live reports whether host is up and heard from within LostAfter; a
// failure to read its record counts as live, so that a hiccup of the
// bucket does not treat a sandbox as lost.
func (h *Hosts) Live(ctx context.Context, host string) bool {
	rec, silent, err := h.store.HostSilence(ctx, host)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false
	} else if err != nil {
		return true
	}
	return rec.State == schemas.HostUp && silent <= h.cfg.LostAfter
}

// Run heartbeats the worker's host and looks for lost hosts every
// Heartbeat until ctx is done. It blocks until then; failures are
// logged.
func (h *Hosts) Run(ctx context.Context) {
	t := time.NewTicker(h.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := h.Heartbeat(ctx); err != nil && ctx.Err() == nil {
			h.log.Warn("host heartbeat", "host", h.cfg.Host, "err", err)
		}
		if ctx.Err() == nil {
			h.detectLost(ctx)
		}
	}
}

// Heartbeat refreshes the host's record: capacity, what its ledger holds,
// this worker's last heartbeat. A host that was marked lost meanwhile is
// up again, and Lost.Back cleans up what was lost on it.
func (h *Hosts) Heartbeat(ctx context.Context) error {
	capacity, err := h.measure(ctx)
	if err != nil {
		return err
	}
	engine, err := h.engine.Host(ctx)
	if err != nil {
		return err
	}
	l, err := h.store.ReadLedger(ctx, state.LedgerKey(engine.ID))
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	wasLost := false
	_, err = h.store.UpdateHost(ctx, h.cfg.Host, nil, func(hs *schemas.HostStatus) error {
		wasLost = hs.State == schemas.HostLost
		hs.Name, hs.EngineID, hs.State, hs.LostAt = h.cfg.Host, engine.ID, schemas.HostUp, time.Time{}
		hs.CPUs, hs.MemoryBytes, hs.DiskBytes = capacity.CPUs, capacity.MemoryBytes, capacity.DiskBytes
		hs.Allocated, hs.Sandboxes = l.Used(), len(l.Allocations)
		if hs.Workers == nil {
			hs.Workers = map[string]time.Time{}
		}
		maps.DeleteFunc(hs.Workers, func(_ string, seen time.Time) bool { return now.Sub(seen) > h.cfg.LostAfter })
		hs.Workers[h.cfg.Worker] = now
		hs.LastSeen = now
		return nil
	})
	if err != nil {
		return fmt.Errorf("record host %s: %w", h.cfg.Host, err)
	}
	if wasLost {
		h.log.Warn("host is back after it was marked lost; removing what was lost on it", "host", h.cfg.Host)
		h.lost.Back(ctx)
	}
	return nil
}
