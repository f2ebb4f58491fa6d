package memruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// Runtime is an in-memory container engine for the unit tests. It
// behaves as an engine does where the orchestrator can tell: images by tag,
// containers with states, named volumes that cannot be removed while a
// container uses them, die and oom events (replayed from since, inclusive, as the
// engine does), and a host. A started container runs its process (the
// process func, the test's stand-in for the executor) until it exits by
// itself, is killed, restarted or removed.
//
// fail, when set, is asked before every operation with its name ("create",
// "volume.remove", ...) and the object it is about; an error it returns is
// what the operation returns, and nothing changes. It is safe for
// concurrent use.
type Runtime struct {
	process Process

	mu         sync.Mutex
	fail       func(op, arg string) error
	buildGate  func(tag string)
	host       runtime.Host
	images     map[string]string // tag -> id
	builds     int
	containers map[string]*memContainer
	volumes    map[string]runtime.VolumeSpec
	history    []runtime.Event
	subs       map[*memSub]struct{}
	next       int
	// idPrefix begins its container ids ("c" when empty), so that two
	// engines' ids differ as real ones do.
	idPrefix string

	procs sync.WaitGroup // process and event goroutines
}

type memContainer struct {
	spec   runtime.ContainerSpec
	state  runtime.ContainerState
	proc   *memProc
	logs   string
	usage  schemas.SandboxUsage
	paused bool // by Pause, until Unpause
}

// memProc is one run of a container's process.
type memProc struct {
	cancel context.CancelFunc
	done   chan struct{}
}

type memSub struct {
	labels []string
	ch     chan runtime.Event
	errc   chan error
}

var _ runtime.Runtime = (*Runtime)(nil)

func New() *Runtime {
	return &Runtime{
		host:       runtime.Host{ID: "mem-engine", CPUs: 4, MemoryBytes: 8 << 30},
		images:     map[string]string{},
		containers: map[string]*memContainer{},
		volumes:    map[string]runtime.VolumeSpec{},
		subs:       map[*memSub]struct{}{},
	}
}

// SetFail sets (nil clears) the failure hook.
func (r *Runtime) SetFail(f func(op, arg string) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = f
}

// SetBuildGate sets (nil clears) a func that every Build calls first with
// the image's tag, while the rest of the engine goes on: a test holds a
// build there, as a long one would be.
func (r *Runtime) SetBuildGate(f func(tag string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buildGate = f
}

// check asks the failure hook; r.mu must be held.
func (r *Runtime) check(op, arg string) error {
	if r.fail == nil {
		return nil
	}
	if err := r.fail(op, arg); err != nil {
		return fmt.Errorf("mem %s %s: %w", op, arg, err)
	}
	return nil
}

// Close stops every process and event stream and waits for them.
func (r *Runtime) Close() {
	r.mu.Lock()
	var stops []*memProc
	for _, c := range r.containers {
		if c.proc != nil {
			stops = append(stops, c.proc)
			c.proc = nil
		}
	}
	for s := range r.subs {
		close(s.ch)
		delete(r.subs, s)
	}
	r.mu.Unlock()
	for _, p := range stops {
		p.cancel()
		<-p.done
	}
	r.procs.Wait()
}

func (r *Runtime) AddImage(tag, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.images[tag] = id
}

func (r *Runtime) ImageID(_ context.Context, ref string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("image", ref); err != nil {
		return "", err
	}
	id, ok := r.images[ref]
	if !ok {
		return "", fmt.Errorf("image %s: %w", ref, runtime.ErrNotFound)
	}
	return id, nil
}

func (r *Runtime) Build(_ context.Context, spec runtime.ImageBuild, progress io.Writer) error {
	r.mu.Lock()
	gate := r.buildGate
	r.mu.Unlock()
	if gate != nil {
		gate(spec.Tag) // outside the lock: the engine goes on meanwhile
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("build", spec.Tag); err != nil {
		return err
	}
	if _, ok := spec.Files["Dockerfile"]; !ok {
		return errors.New("build " + spec.Tag + ": the context has no Dockerfile")
	}
	r.builds++
	r.images[spec.Tag] = fmt.Sprintf("sha256:built%d", r.builds)
	if progress != nil {
		fmt.Fprintf(progress, "built %s\n", spec.Tag)
	}
	return nil
}

func (r *Runtime) Create(_ context.Context, spec runtime.ContainerSpec) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("create", spec.Name); err != nil {
		return "", err
	}
	if _, ok := r.images[spec.Image]; !ok {
		return "", fmt.Errorf("create container %s: image %s: %w", spec.Name, spec.Image, runtime.ErrNotFound)
	}
	for _, c := range r.containers {
		if c.spec.Name == spec.Name {
			return "", fmt.Errorf("create container %s: the name is in use", spec.Name)
		}
	}
	for v := range spec.Volumes {
		if _, ok := r.volumes[v]; !ok {
			r.volumes[v] = runtime.VolumeSpec{Name: v} // the engine makes a missing volume
		}
	}
	r.next++
	prefix := r.idPrefix
	if prefix == "" {
		prefix = "c"
	}
	id := fmt.Sprintf("%s%04d", prefix, r.next)
	r.containers[id] = &memContainer{
		spec:  spec,
		state: runtime.ContainerState{ID: id, Name: spec.Name, Status: runtime.StatusCreated, Labels: spec.Labels},
		usage: schemas.SandboxUsage{MemoryBytes: 5 << 20, PIDs: 3, CPUPercent: 1.5},
	}
	return id, nil
}

// find returns a container by id or name; r.mu must be held.
func (r *Runtime) find(ref string) (*memContainer, error) {
	if c, ok := r.containers[ref]; ok {
		return c, nil
	}
	for _, c := range r.containers {
		if c.spec.Name == ref {
			return c, nil
		}
	}
	return nil, fmt.Errorf("container %s: %w", ref, runtime.ErrNotFound)
}

func (r *Runtime) Start(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("start", id); err != nil {
		return err
	}
	c, err := r.find(id)
	if err != nil {
		return err
	}
	if c.state.Running {
		return nil
	}
	r.startProc(c)
	return nil
}

func (r *Runtime) Restart(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("restart", id); err != nil {
		return err
	}
	c, err := r.find(id)
	if err != nil {
		return err
	}
	if c.proc != nil {
		r.stopProc(c)
		r.exited(c, 137, false)
	}
	r.startProc(c)
	return nil
}

func (r *Runtime) Kill(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("kill", id); err != nil {
		return err
	}
	c, err := r.find(id)
	if err != nil {
		return err
	}
	if c.proc != nil {
		r.stopProc(c)
		r.exited(c, 137, false)
	}
	return nil
}

func (r *Runtime) Remove(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("remove", id); err != nil {
		return err
	}
	c, err := r.find(id)
	if errors.Is(err, runtime.ErrNotFound) {
		return nil
	}
	c.state.Status = runtime.StatusRemoving
	if c.proc != nil {
		r.stopProc(c)
		r.exited(c, 137, false)
	}
	delete(r.containers, c.state.ID)
	return nil
}

func (r *Runtime) Inspect(_ context.Context, id string) (runtime.ContainerState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("inspect", id); err != nil {
		return runtime.ContainerState{}, err
	}
	c, err := r.find(id)
	if err != nil {
		return runtime.ContainerState{}, err
	}
	return c.state, nil
}

func (r *Runtime) List(_ context.Context, labels ...string) ([]runtime.ContainerState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("list", strings.Join(labels, ",")); err != nil {
		return nil, err
	}
	var out []runtime.ContainerState
	for _, id := range slices.Sorted(maps.Keys(r.containers)) {
		if c := r.containers[id]; hasLabels(c.spec.Labels, labels) {
			out = append(out, c.state)
		}
	}
	return out, nil
}

func hasLabels(have map[string]string, want []string) bool {
	for _, l := range want {
		k, v, withValue := strings.Cut(l, "=")
		got, ok := have[k]
		if !ok || withValue && got != v {
			return false
		}
	}
	return true
}

func (r *Runtime) Logs(_ context.Context, id string, _ int) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("logs", id); err != nil {
		return "", err
	}
	c, err := r.find(id)
	if err != nil {
		return "", err
	}
	return c.logs, nil
}

func (r *Runtime) Stats(_ context.Context, id string) (schemas.SandboxUsage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("stats", id); err != nil {
		return schemas.SandboxUsage{}, err
	}
	c, err := r.find(id)
	if err != nil {
		return schemas.SandboxUsage{}, err
	}
	u := c.usage
	u.ReadAt = time.Now().UTC()
	return u, nil
}

func (r *Runtime) CreateVolume(_ context.Context, spec runtime.VolumeSpec) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("volume.create", spec.Name); err != nil {
		return err
	}
	if _, ok := r.volumes[spec.Name]; !ok {
		r.volumes[spec.Name] = spec
	}
	return nil
}

func (r *Runtime) RemoveVolume(_ context.Context, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("volume.remove", name); err != nil {
		return err
	}
	for _, c := range r.containers {
		if _, ok := c.spec.Volumes[name]; ok {
			return fmt.Errorf("remove volume %s: volume is in use by container %s", name, c.state.ID)
		}
	}
	delete(r.volumes, name)
	return nil
}

// volumeOnDevice reports whether a volume mounts device.
func (r *Runtime) volumeOnDevice(device string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.volumes {
		if v.Device == device {
			return true
		}
	}
	return false
}

func (r *Runtime) Host(context.Context) (runtime.Host, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check("host", ""); err != nil {
		return runtime.Host{}, err
	}
	return r.host, nil
}

// Counts returns how many containers and volumes exist.
func (r *Runtime) Counts() (containers, volumes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.containers), len(r.volumes)
}
