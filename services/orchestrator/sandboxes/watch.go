package sandboxes

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/locks"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// A Watcher follows the engine's events of one host's containers for its
// sandboxes and group databases.
type Watcher struct {
	s         *Service
	pools     PoolContainers
	databases DatabaseDeaths
}

// PoolContainers tells which sandbox a pooled container now is.
// *pool.Pools implements it.
type PoolContainers interface {
	// SandboxOf returns the sandbox whose container is that of id: the
	// sandbox that claimed pooled sandbox id, id itself when it is not
	// pooled, "" for a pooled sandbox not claimed.
	SandboxOf(ctx context.Context, id string) string
}

// DatabaseDeaths is told when a group database's container stops.
// *groupdb.Databases implements it.
type DatabaseDeaths interface {
	OnDied(ctx context.Context, ev runtime.Event)
}

// NewWatcher returns the watcher of s's sandboxes, of the containers of
// pools and of the group databases.
func NewWatcher(s *Service, pools PoolContainers, databases DatabaseDeaths) *Watcher {
	return &Watcher{s: s, pools: pools, databases: databases}
}

// Run follows the engine's events of sandbox containers until ctx ends:
// an OOM kill is recorded in the sandbox's status and the events stream and
// handled by the sandbox's OOM policy; a sandbox whose container stops by
// itself is restarted (after an OOM kill, by policy) or marked failed; a
// group's database that stops by itself is started again
// (onDatabaseDied). A broken event stream is reopened from the last event
// seen.
//
// Each sandbox's events are handled in their order, one at a time, in a
// lane of their own (eventLanes): a restart that waits up to ReadyTimeout
// for its executor holds up that sandbox's later events, not the others'.
func (w *Watcher) Run(ctx context.Context) {
	s := w.s
	var databases sync.WaitGroup
	defer databases.Wait()
	lanes := eventLanes{handle: func(ev runtime.Event) { w.handle(ctx, ev) }}
	defer lanes.wait()
	since := time.Now()
	for ctx.Err() == nil {
		evs, errs := s.rt.Events(ctx, since, runtime.LabelManaged+"=true")
		for ev := range evs {
			since = ev.Time
			if ev.Labels[runtime.LabelDatabase] != "" {
				if ev.Kind == runtime.ContainerDied {
					// Starting a database takes a while; the sandboxes'
					// events do not wait for it.
					databases.Go(func() { w.databases.OnDied(ctx, ev) })
				}
				continue
			}
			lanes.add(ev.Labels[runtime.LabelSandbox], ev)
		}
		select {
		case err := <-errs:
			s.log.Warn("engine event stream broke; reopening", "err", err)
		default:
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// handle dispatches one event of a sandbox container: the container of a
// pooled sandbox is that of the sandbox that claimed it.
func (w *Watcher) handle(ctx context.Context, ev runtime.Event) {
	s := w.s
	id := w.pools.SandboxOf(ctx, ev.Labels[runtime.LabelSandbox])
	if id == "" {
		return
	}
	// The engine is this host's: an event of a sandbox recorded on another
	// host is of a leftover container, not of that sandbox.
	if st, _, err := s.store.Sandbox(ctx, id); err != nil || !s.here(st.Host) {
		return
	}
	switch ev.Kind {
	case runtime.ContainerOOM:
		s.onOOM(ctx, id, ev)
	case runtime.ContainerDied:
		s.onDie(ctx, id, ev)
	}
}

// onOOM records an OOM kill, publishes it and applies the OOM policy.
func (s *Service) onOOM(ctx context.Context, id string, ev runtime.Event) {
	recorded := false
	st, err := s.store.UpdateSandbox(ctx, id, func(st *schemas.SandboxStatus) error {
		// Every worker on this engine sees the event, and a reopened
		// stream may repeat it: the first to record it handles it.
		recorded = ev.Time.After(st.LastOOMAt)
		if !recorded {
			return state.ErrUnchanged
		}
		st.OOMKills++
		st.LastOOMAt = ev.Time
		return nil
	})
	if err != nil || !recorded {
		return
	}
	msg := fmt.Sprintf("the kernel killed a process of sandbox %s: it ran out of its %s of memory (OOM kill %d; policy %s)",
		id, resources.FormatBytes(st.Resources.MemoryBytes), st.OOMKills, policy(st))
	s.log.Warn("sandbox out of memory", "sandbox", id, "kills", st.OOMKills, "policy", policy(st))
	reason := fmt.Sprintf("out of memory (limit %s, policy %s)", resources.FormatBytes(st.Resources.MemoryBytes), policy(st))
	s.publish(schemas.Event{Kind: schemas.EventOOMKilled, GroupID: st.GroupID, SandboxID: id, Reason: reason, Message: msg, Sandbox: &st})
	switch policy(st) {
	case schemas.OnOOMRestart:
		s.restartSandbox(ctx, id, "it ran out of memory")
	case schemas.OnOOMFail:
		s.failSandbox(ctx, id, fmt.Sprintf("out of memory: a process exceeded the %s limit (on_oom: fail)", resources.FormatBytes(st.Resources.MemoryBytes)))
	}
}

// onDie handles a sandbox container that stopped without being asked to.
func (s *Service) onDie(ctx context.Context, id string, ev runtime.Event) {
	// The lock waits for this worker's own restart of the sandbox, whose
	// die this may be.
	unlock := s.locks.Lock(locks.Sandbox(id))
	st, _, err := s.store.Sandbox(ctx, id)
	unlock()
	if err != nil || st.State != schemas.StateRunning || st.Container != ev.ContainerID {
		return // ended on request, already handled, or not ours
	}
	cs, err := s.rt.Inspect(ctx, st.Container)
	if err != nil || cs.Running || cs.Status == runtime.StatusRemoving || cs.Status == runtime.StatusDead {
		return // being removed, or restarted in between
	}
	if s.runsAgain(ctx, st.Container) {
		return // another worker's restart: its die, then its start
	}
	// Every worker on the engine sees the die; the one whose
	// compare-and-set records it handles it.
	claimed := false
	st, err = s.store.UpdateSandbox(ctx, id, func(st *schemas.SandboxStatus) error {
		claimed = false // a retry after another worker's write starts afresh
		if st.State != schemas.StateRunning || st.Container != ev.ContainerID || !ev.Time.After(st.LastExitAt) {
			return state.ErrUnchanged
		}
		st.LastExitAt, claimed = ev.Time, true
		return nil
	})
	if err != nil || !claimed {
		return
	}
	if cs.OOMKilled && policy(st) != schemas.OnOOMFail {
		s.restartSandbox(ctx, id, "its executor was killed for memory")
		return
	}
	logs, _ := s.rt.Logs(ctx, st.Container, 10)
	reason := fmt.Sprintf("the sandbox stopped by itself (exit code %d, oom killed %t): %s", cs.ExitCode, cs.OOMKilled, logs)
	s.failSandbox(ctx, id, reason)
}

// runsAgain watches a container that died for Config.RestartGrace and
// reports whether it runs again meanwhile: then the die was a restart's
// (another worker of the engine restarting the sandbox after an OOM kill),
// not a crash. Sandbox containers have no restart policy, so nothing else
// starts them. A crash is handled that much later.
func (s *Service) runsAgain(ctx context.Context, container string) bool {
	deadline := time.Now().Add(s.cfg.RestartGrace)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
		if state, err := s.rt.Inspect(ctx, container); err == nil && state.Running {
			return true
		}
	}
	return false
}

func policy(st schemas.SandboxStatus) schemas.OOMPolicy {
	if st.Resources.OnOOM == "" {
		return schemas.OnOOMContinue
	}
	return st.Resources.OnOOM
}

// restartSandbox restarts a running sandbox's container, waits until it
// answers and tells its executor why, for its next observation.
func (s *Service) restartSandbox(ctx context.Context, id, why string) {
	unlock := s.locks.Lock(locks.Sandbox(id))
	defer unlock()
	st, _, err := s.store.Sandbox(ctx, id)
	if err != nil || st.State != schemas.StateRunning {
		return
	}
	s.log.Warn("restarting sandbox", "sandbox", id, "why", why)
	// Published before the restart, so before any new executor serves: a
	// client whose batch went to the old one learns it is lost, and one
	// that sees the event cannot have reached the new one
	// (schemas.EventRestarted).
	s.publish(schemas.Event{Kind: schemas.EventRestarted, GroupID: st.GroupID, SandboxID: id, Reason: why, Message: "restarted: " + why, Sandbox: &st})
	rw, err := s.watchReady(id)
	if err != nil {
		s.markFailed(ctx, id, fmt.Sprintf("restart after %s failed: %v", why, err))
		return
	}
	defer rw.Close()
	if err := s.rt.Restart(ctx, st.Container); err != nil {
		s.markFailed(ctx, id, fmt.Sprintf("restart after %s failed: %v", why, err))
		return
	}
	if err := s.waitReady(ctx, st, rw); err != nil {
		s.markFailed(ctx, id, fmt.Sprintf("restart after %s: %v", why, err))
		return
	}
	st, err = s.store.UpdateSandbox(ctx, id, func(st *schemas.SandboxStatus) error {
		st.Restarts++
		return nil
	})
	if err != nil {
		return
	}
	hit := schemas.LimitHit{
		Resource: schemas.LimitMemory,
		Count:    1,
		Message: fmt.Sprintf("the sandbox was restarted because %s (limit %s): every process and terminal session started afresh; /workspace was kept",
			why, resources.FormatBytes(st.Resources.MemoryBytes)),
	}
	if data, err := json.Marshal(hit); err == nil {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = s.nc.RequestWithContext(rctx, schemas.NoticeSubject(id), data)
		cancel()
		if err != nil {
			s.log.Warn("tell sandbox of its restart", "sandbox", id, "err", err)
		}
	}
	s.publish(schemas.Event{Kind: schemas.EventStarted, GroupID: st.GroupID, SandboxID: id, Message: "running again after a restart: " + why, Sandbox: &st})
}

// failSandbox stops a sandbox's container and marks it failed.
func (s *Service) failSandbox(ctx context.Context, id, reason string) {
	unlock := s.locks.Lock(locks.Sandbox(id))
	defer unlock()
	st, _, err := s.store.Sandbox(ctx, id)
	if err != nil || st.State != schemas.StateRunning {
		return
	}
	if err := s.rt.Kill(ctx, st.Container); err != nil {
		s.log.Warn("stop failed sandbox", "sandbox", id, "err", err)
	}
	s.markFailed(ctx, id, reason)
}

// markFailed records a sandbox as failed and publishes the change.
func (s *Service) markFailed(ctx context.Context, id, reason string) {
	st, err := s.store.UpdateSandbox(ctx, id, func(st *schemas.SandboxStatus) error {
		st.State, st.Reason = schemas.StateFailed, reason
		return nil
	})
	if err != nil {
		s.log.Error("mark sandbox failed", "sandbox", id, "err", err)
		return
	}
	s.log.Warn("sandbox failed", "sandbox", id, "reason", reason)
	s.publish(schemas.Event{Kind: schemas.EventExited, GroupID: st.GroupID, SandboxID: id, Reason: reason, Message: reason, Sandbox: &st})
}

// eventLanes hands the events of each key to handle in the order they
// came, one at a time per key, and those of different keys at once: a
// goroutine per key with events waiting, which ends when they are done.
type eventLanes struct {
	handle  func(runtime.Event)
	mu      sync.Mutex
	waiting map[string][]runtime.Event // the key's events not yet handled; present while its goroutine runs
	running sync.WaitGroup
}

// add queues ev in key's lane, starting the lane when it is idle.
func (l *eventLanes) add(key string, ev runtime.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiting == nil {
		l.waiting = map[string][]runtime.Event{}
	}
	if queue, busy := l.waiting[key]; busy {
		l.waiting[key] = append(queue, ev)
		return
	}
	l.waiting[key] = []runtime.Event{}
	l.running.Go(func() {
		for {
			l.handle(ev)
			l.mu.Lock()
			queue := l.waiting[key]
			if len(queue) == 0 {
				delete(l.waiting, key)
				l.mu.Unlock()
				return
			}
			ev, l.waiting[key] = queue[0], queue[1:]
			l.mu.Unlock()
		}
	})
}

// wait waits until every lane has handled its events.
func (l *eventLanes) wait() { l.running.Wait() }
