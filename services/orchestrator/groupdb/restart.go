package groupdb

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// A group's database whose container stops by itself (a crash, an OOM
// kill) is started again by the workers of the host it runs on, with its
// volume, so that the group's database tools answer again without the
// group being ended and made again. A database that keeps stopping is left
// stopped after dbRestartLimit starts within dbRestartWindow: its calls
// answer unavailable, and the worker logs why.
const (
	dbRestartLimit  = 5
	dbRestartWindow = 10 * time.Minute
)

// restarts remembers when this worker started each database container
// again.
type restarts struct {
	mu sync.Mutex
	at map[string][]time.Time
}

// allow records a start of container at now and reports whether it stays
// within the limit.
func (r *restarts) allow(container string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at == nil {
		r.at = map[string][]time.Time{}
	}
	recent := r.at[container][:0]
	for _, t := range r.at[container] {
		if now.Sub(t) < dbRestartWindow {
			recent = append(recent, t)
		}
	}
	if len(recent) >= dbRestartLimit {
		r.at[container] = recent
		return false
	}
	r.at[container] = append(recent, now)
	return true
}

// OnDied starts a group's database container again when it
// stopped by itself: the group still exists, its databases run on this
// host, and the container is neither running (another worker of the host
// started it) nor being removed (the group is ending). A new address is
// recorded in the group, where the data service reads it.
func (d *Databases) OnDied(ctx context.Context, ev runtime.Event) {
	groupID, db := ev.Labels[runtime.LabelGroup], ev.Labels[runtime.LabelDatabase]
	log := d.log.With("group", groupID, "database", db)
	g, _, err := d.store.Group(ctx, groupID)
	if err != nil || g.DatabaseHost != d.cfg.Host {
		return // ended (Reconcile removes it), or not this host's
	}
	var endpoint schemas.DatabaseEndpoint
	for _, e := range g.Databases {
		if e.Database == db {
			endpoint = e
		}
	}
	if endpoint.Container == "" {
		return // still starting: Start answers for it
	}
	c, err := d.rt.Inspect(ctx, ev.ContainerID)
	if err != nil || c.Running || c.Status == runtime.StatusRemoving || c.Status == runtime.StatusDead {
		return
	}
	if !d.restarts.allow(endpoint.Container, time.Now()) {
		log.Error("database keeps stopping: left stopped, its calls answer unavailable", "starts", dbRestartLimit, "within", dbRestartWindow, "exit_code", ev.ExitCode, "oom_killed", c.OOMKilled)
		return
	}
	log.Warn("database stopped by itself; starting it again", "exit_code", ev.ExitCode, "oom_killed", c.OOMKilled)
	if err := d.rt.Start(ctx, ev.ContainerID); err != nil {
		log.Error("start the database again", "err", err)
		return
	}
	if d.net == nil {
		return
	}
	ip, err := d.net.ContainerIP(ctx, ev.ContainerID, d.cfg.Network)
	_, port, perr := net.SplitHostPort(endpoint.Address)
	if err = errors.Join(err, perr); err != nil {
		log.Error("the database's address after its start", "err", err)
		return
	}
	addr := net.JoinHostPort(ip, port)
	if addr == endpoint.Address {
		return
	}
	if _, err := d.store.UpdateGroup(ctx, groupID, func(g *schemas.GroupStatus) error {
		for i := range g.Databases {
			if g.Databases[i].Database == db {
				g.Databases[i].Address = addr
			}
		}
		return nil
	}); err != nil {
		log.Error("record the database's new address", "address", addr, "err", err)
		return
	}
	log.Info("database has a new address", "address", addr, "was", endpoint.Address)
}
