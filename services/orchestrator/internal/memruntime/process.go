package memruntime

import (
	"context"

	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// startProc runs c's process; r.mu must be held.
func (r *Runtime) startProc(c *memContainer) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &memProc{cancel: cancel, done: make(chan struct{})}
	c.proc = p
	c.state.Running, c.state.Status, c.state.OOMKilled, c.state.ExitCode = true, runtime.StatusRunning, false, 0
	process := r.process
	spec := c.spec
	r.procs.Go(func() {
		defer close(p.done)
		var err error
		if process != nil {
			err = process(ctx, spec)
		} else {
			<-ctx.Done()
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if c.proc != p {
			return // stopped by the engine, which recorded how
		}
		c.proc = nil
		code := 0
		if err != nil {
			code, c.logs = 1, err.Error()
		}
		r.exited(c, code, false)
	})
}

// stopProc kills c's process and waits for it; r.mu must be held, and is
// released while waiting.
func (r *Runtime) stopProc(c *memContainer) {
	p := c.proc
	if p == nil {
		return
	}
	c.proc = nil
	r.mu.Unlock()
	p.cancel()
	<-p.done
	r.mu.Lock()
}

// exited records that c's process ended and emits the die event; r.mu must
// be held.
func (r *Runtime) exited(c *memContainer, code int, oom bool) {
	c.state.Running, c.state.Status, c.state.ExitCode, c.state.OOMKilled = false, runtime.StatusExited, code, oom
	r.emit(runtime.Event{Kind: runtime.ContainerDied, ContainerID: c.state.ID, Labels: c.spec.Labels, ExitCode: code})
}

// OOM is the kernel killing a process of container id for memory: an oom
// event, and when main is true the container's main process is the one
// killed, so that it dies too.
func (r *Runtime) OOM(id string, main bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.find(id)
	if err != nil {
		return
	}
	r.emit(runtime.Event{Kind: runtime.ContainerOOM, ContainerID: c.state.ID, Labels: c.spec.Labels})
	if main && c.proc != nil {
		r.stopProc(c)
		r.exited(c, 137, true)
	}
}

// Exit makes container id's process exit by itself with code.
func (r *Runtime) Exit(id string, code int, logs string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.find(id)
	if err != nil || c.proc == nil {
		return
	}
	r.stopProc(c)
	c.logs = logs
	r.exited(c, code, false)
}
