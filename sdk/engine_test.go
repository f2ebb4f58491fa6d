package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/executor"
	"github.com/sandox/sandox/executor/limits"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/tools"
)

// fakeEngine is the container engine of the SDK's unit tests, which cannot
// run Docker: each "container" is a real executor.Server in this process,
// serving real tools in a temporary workspace over the test's NATS server.
// Everything the orchestrator asks of an engine is answered from memory;
// crash and oomKill play the engine events the orchestrator's watcher
// handles. It is safe for concurrent use.
type fakeEngine struct {
	t       *testing.T
	natsURL string
	dir     string

	mu         sync.Mutex
	images     map[string]bool
	containers map[string]*fakeContainer
	volumes    map[string]string
	events     chan runtime.Event
}

type fakeContainer struct {
	spec      runtime.ContainerSpec
	sandboxID string
	workspace string
	running   bool
	oomKilled bool
	exitCode  int
	stop      func() // stops the executor and waits for it
}

var _ runtime.Runtime = (*fakeEngine)(nil)

func newFakeEngine(t *testing.T, natsURL string) *fakeEngine {
	e := &fakeEngine{
		t:          t,
		natsURL:    natsURL,
		dir:        t.TempDir(),
		images:     map[string]bool{orchestrator.DefaultConfig().SandboxImage: true},
		containers: map[string]*fakeContainer{},
		volumes:    map[string]string{},
		events:     make(chan runtime.Event, 16),
	}
	t.Cleanup(e.stopAll)
	return e
}

func (e *fakeEngine) ImageID(_ context.Context, ref string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.images[ref] {
		return "", fmt.Errorf("image %s: %w", ref, runtime.ErrNotFound)
	}
	return "sha256:" + ref, nil
}

func (e *fakeEngine) Build(_ context.Context, spec runtime.ImageBuild, progress io.Writer) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.images[spec.Tag] = true
	_, err := fmt.Fprintf(progress, "built %s\n", spec.Tag)
	return err
}

func (e *fakeEngine) Create(_ context.Context, spec runtime.ContainerSpec) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.containers[spec.Name]; ok {
		return "", fmt.Errorf("container %s exists", spec.Name)
	}
	c := &fakeContainer{spec: spec, sandboxID: spec.Labels[runtime.LabelSandbox]}
	for name := range spec.Volumes {
		c.workspace = e.volumes[name]
	}
	if c.workspace == "" {
		return "", fmt.Errorf("container %s: no workspace volume", spec.Name)
	}
	e.containers[spec.Name] = c
	return spec.Name, nil
}

// Start runs the container's executor: a real executor.Server with the
// built-in tools, on its own NATS connection.
func (e *fakeEngine) Start(ctx context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.containers[id]
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	if c.running {
		return nil
	}
	nc, err := nats.Connect(e.natsURL, nats.Name("executor-"+c.sandboxID))
	if err != nil {
		return err
	}
	// The executor's environment as the orchestrator wrote it, with the
	// paths and the NATS URL of this process.
	var env schemas.ExecutorEnv
	vars := map[string]string{}
	for _, kv := range c.spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	if err := env.FromEnv(func(k string) string { return vars[k] }); err != nil {
		nc.Close()
		return err
	}
	env.NATSURL, env.NATSCreds = e.natsURL, ""
	env.Workspace, env.ToolsDir = c.workspace, filepath.Join(e.dir, "no-tools")
	env.CgroupRoot = filepath.Join(e.dir, "no-cgroup")
	log := slog.New(slog.DiscardHandler)
	reg, closeTools, err := executor.Tools(context.WithoutCancel(ctx), tools.Env{Executor: env, Log: log})
	if err != nil {
		nc.Close()
		return err
	}
	lw, err := limits.New(limits.Config{CgroupRoot: env.CgroupRoot, Workspace: c.workspace})
	if err != nil {
		closeTools()
		nc.Close()
		return err
	}
	srv := executor.NewServer(nc, reg, executor.Config{SandboxID: c.sandboxID, ActionTimeout: 30 * time.Second, Limits: lw}, log)
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	c.running, c.oomKilled, c.exitCode = true, false, 0
	c.stop = func() {
		// The connection goes first, as when a container is killed: a
		// batch in hand is never answered. Closing the tools kills its
		// processes, so that the executor stops at once.
		nc.Close()
		closeTools()
		cancel()
		// Serve fails only when it cannot subscribe, which a stop during
		// its start causes: that is the kill, not a fault.
		if err := <-done; err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			e.t.Errorf("executor of %s: %v", c.sandboxID, err)
		}
	}
	return nil
}

// halt stops a running container's executor; e.mu is held.
func (c *fakeContainer) halt(exitCode int, oom bool) {
	if !c.running {
		return
	}
	c.stop()
	c.running, c.exitCode, c.oomKilled = false, exitCode, oom
}

func (e *fakeEngine) Remove(_ context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.containers[id]; ok {
		c.halt(137, false)
		delete(e.containers, id)
	}
	return nil
}

func (e *fakeEngine) Inspect(_ context.Context, id string) (runtime.ContainerState, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.containers[id]
	if !ok {
		return runtime.ContainerState{}, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	return c.state(id), nil
}

func (c *fakeContainer) state(id string) runtime.ContainerState {
	status := runtime.StatusExited
	if c.running {
		status = runtime.StatusRunning
	}
	return runtime.ContainerState{ID: id, Name: id, Running: c.running, OOMKilled: c.oomKilled, ExitCode: c.exitCode, Status: status, Labels: c.spec.Labels}
}

func (e *fakeEngine) Logs(context.Context, string, int) (string, error) { return "", nil }

func (e *fakeEngine) List(_ context.Context, labels ...string) ([]runtime.ContainerState, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []runtime.ContainerState
	for id, c := range e.containers {
		if hasLabels(c.spec.Labels, labels) {
			out = append(out, c.state(id))
		}
	}
	return out, nil
}

func hasLabels(have map[string]string, want []string) bool {
	for _, l := range want {
		k, v, _ := strings.Cut(l, "=")
		if have[k] != v {
			return false
		}
	}
	return true
}

func (e *fakeEngine) CreateVolume(_ context.Context, spec runtime.VolumeSpec) error {
	name := spec.Name
	dir := filepath.Join(e.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.volumes[name] = dir
	return nil
}

func (e *fakeEngine) RemoveVolume(_ context.Context, name string) error {
	e.mu.Lock()
	dir, ok := e.volumes[name]
	delete(e.volumes, name)
	e.mu.Unlock()
	if !ok {
		return nil
	}
	return os.RemoveAll(dir)
}

func (e *fakeEngine) Host(context.Context) (runtime.Host, error) {
	return runtime.Host{ID: "fake-engine", CPUs: 4, MemoryBytes: 16 << 30}, nil
}

// Stats reads the engine's side of a sandbox's use. The fake engine
// measures nothing: it answers a fixed reading.
func (e *fakeEngine) Stats(_ context.Context, id string) (schemas.SandboxUsage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.containers[id]
	if !ok || !c.running {
		return schemas.SandboxUsage{}, fmt.Errorf("container %s is not running: %w", id, runtime.ErrNotFound)
	}
	return schemas.SandboxUsage{CPUPercent: 1.5, MemoryBytes: 32 << 20, PIDs: 3, ReadAt: time.Now().UTC()}, nil
}

func (e *fakeEngine) Restart(ctx context.Context, id string) error {
	e.mu.Lock()
	c, ok := e.containers[id]
	if ok {
		c.halt(137, false)
	}
	e.mu.Unlock()
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	return e.Start(ctx, id)
}

func (e *fakeEngine) Kill(_ context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.containers[id]; ok {
		c.halt(137, false)
	}
	return nil
}

// Events hands the orchestrator's watcher the events crash and oomKill
// play; the stream ends with ctx.
func (e *fakeEngine) Events(ctx context.Context, _ time.Time, _ ...string) (<-chan runtime.Event, <-chan error) {
	out, errs := make(chan runtime.Event), make(chan error, 1)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-e.events:
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, errs
}

// crash stops a sandbox's executor as if its container stopped by itself,
// and tells the watcher; oom says whether the kernel killed it for memory.
func (e *fakeEngine) crash(sandboxID string, exitCode int, oom bool) {
	e.t.Helper()
	id := runtime.ContainerName(sandboxID)
	e.mu.Lock()
	c, ok := e.containers[id]
	if !ok {
		e.mu.Unlock()
		e.t.Fatalf("crash %s: no such container", sandboxID)
	}
	c.halt(exitCode, oom)
	labels := c.spec.Labels
	e.mu.Unlock()
	e.events <- runtime.Event{Kind: runtime.ContainerDied, ContainerID: id, Labels: labels, ExitCode: exitCode, Time: time.Now()}
}

// workspace is the directory of a sandbox's workspace volume.
func (e *fakeEngine) workspace(sandboxID string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.volumes[runtime.VolumeName(sandboxID)]
}

// vanish stops a sandbox's executor with no event, as a lost host would.
func (e *fakeEngine) vanish(sandboxID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.containers[runtime.ContainerName(sandboxID)]; ok {
		c.halt(137, false)
	}
}

func (e *fakeEngine) stopAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.containers {
		c.halt(137, false)
	}
}
