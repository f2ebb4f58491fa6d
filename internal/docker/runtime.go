package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/docker/docker/api/types/mount"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// Runtime drives the Docker engine in the orchestrator's terms: it
// implements runtime.Runtime over a Client. It is safe for concurrent
// use.
type Runtime struct {
	c *Client
}

var _ runtime.Runtime = (*Runtime)(nil)

// NewRuntime returns the orchestrator's runtime on the engine c talks to.
func NewRuntime(c *Client) *Runtime { return &Runtime{c: c} }

// ImageID returns the id of the image ref.
func (r *Runtime) ImageID(ctx context.Context, ref string) (string, error) {
	return r.c.ImageID(ctx, ref)
}

// Build builds an image from spec's in-memory context.
func (r *Runtime) Build(ctx context.Context, spec runtime.ImageBuild, progress io.Writer) error {
	return r.c.Build(ctx, BuildSpec{Tag: spec.Tag, Files: spec.Files, Labels: spec.Labels}, progress)
}

// Create creates a sandbox container (not started) and returns its id.
func (r *Runtime) Create(ctx context.Context, spec runtime.ContainerSpec) (string, error) {
	cs := ContainerSpec{
		Name:         spec.Name,
		Image:        spec.Image,
		Env:          spec.Env,
		Labels:       spec.Labels,
		User:         spec.User,
		Network:      spec.Network,
		NanoCPUs:     spec.NanoCPUs,
		CPUSet:       spec.CPUSet,
		Memory:       spec.MemoryBytes,
		PidsLimit:    spec.PIDs,
		ReadOnlyRoot: spec.ReadOnlyRoot,
		Tmpfs:        spec.Tmpfs,
		Hardened:     spec.Hardened,
		Init:         spec.Init,
		Runtime:      spec.Runtime,
	}
	for name, target := range spec.Volumes {
		cs.Mounts = append(cs.Mounts, mount.Mount{Type: mount.TypeVolume, Source: name, Target: target})
	}
	for name, target := range spec.ReadOnlyVolumes {
		cs.Mounts = append(cs.Mounts, mount.Mount{Type: mount.TypeVolume, Source: name, Target: target, ReadOnly: true})
	}
	for _, b := range spec.Binds {
		cs.Mounts = append(cs.Mounts, mount.Mount{Type: mount.TypeBind, Source: b.Source, Target: b.Target, ReadOnly: b.ReadOnly})
	}
	return r.c.Create(ctx, cs)
}

// Start starts a created container.
func (r *Runtime) Start(ctx context.Context, id string) error {
	return r.c.Start(ctx, id)
}

// Restart kills a container's processes and starts it again.
func (r *Runtime) Restart(ctx context.Context, id string) error {
	return r.c.Restart(ctx, id)
}

// Kill stops a container at once with SIGKILL.
func (r *Runtime) Kill(ctx context.Context, id string) error { return r.c.Kill(ctx, id) }

// Remove stops and removes a container with its anonymous volumes.
func (r *Runtime) Remove(ctx context.Context, id string) error { return r.c.Remove(ctx, id) }

// Inspect returns a container's state.
func (r *Runtime) Inspect(ctx context.Context, id string) (runtime.ContainerState, error) {
	s, err := r.c.Inspect(ctx, id)
	if err != nil {
		return runtime.ContainerState{}, err
	}
	return containerState(s), nil
}

// List returns the containers that carry every label.
func (r *Runtime) List(ctx context.Context, labels ...string) ([]runtime.ContainerState, error) {
	list, err := r.c.List(ctx, labels...)
	if err != nil {
		return nil, err
	}
	out := make([]runtime.ContainerState, 0, len(list))
	for _, s := range list {
		out = append(out, containerState(s))
	}
	return out, nil
}

func containerState(s State) runtime.ContainerState {
	return runtime.ContainerState{
		ID:        s.ID,
		Name:      s.Name,
		Status:    runtime.ContainerStatus(s.Status),
		Running:   s.Running,
		OOMKilled: s.OOMKilled,
		ExitCode:  s.ExitCode,
		Labels:    s.Labels,
	}
}

// Logs returns the last tail lines a container wrote.
func (r *Runtime) Logs(ctx context.Context, id string, tail int) (string, error) {
	return r.c.Logs(ctx, id, tail)
}

// Stats reads a container's CPU, memory and process use; it blocks for
// about a second.
func (r *Runtime) Stats(ctx context.Context, id string) (schemas.SandboxUsage, error) {
	return r.c.Stats(ctx, id)
}

// CreateVolume creates a local volume; with a device it mounts that device.
func (r *Runtime) CreateVolume(ctx context.Context, spec runtime.VolumeSpec) error {
	var opts map[string]string
	if spec.Device != "" {
		opts = map[string]string{"type": spec.FSType, "device": spec.Device}
	}
	return r.c.CreateVolume(ctx, spec.Name, spec.Labels, opts)
}

// RemoveVolume removes a volume; a missing one is no error.
func (r *Runtime) RemoveVolume(ctx context.Context, name string) error {
	return r.c.RemoveVolume(ctx, name)
}

// Events streams the die and oom events of containers with every label.
func (r *Runtime) Events(ctx context.Context, since time.Time, labels ...string) (<-chan runtime.Event, <-chan error) {
	in, errs := r.c.Events(ctx, since, labels...)
	out := make(chan runtime.Event)
	go func() {
		defer close(out)
		for ev := range in {
			kind := runtime.EventKind(ev.Action)
			if kind != runtime.ContainerDied && kind != runtime.ContainerOOM {
				continue
			}
			select {
			case out <- runtime.Event{Kind: kind, ContainerID: ev.ContainerID, Labels: ev.Labels, ExitCode: ev.ExitCode, Time: ev.Time}:
			case <-ctx.Done():
				// The inner stream closes on ctx too; drain it so that
				// its goroutine ends.
				for range in {
				}
				return
			}
		}
	}()
	return out, errs
}

// Host reads the engine's view of its machine.
func (r *Runtime) Host(ctx context.Context) (runtime.Host, error) {
	h, err := r.c.Host(ctx)
	if err != nil {
		return runtime.Host{}, err
	}
	return runtime.Host{ID: h.ID, CPUs: h.CPUs, MemoryBytes: h.MemoryBytes}, nil
}

// EnsureNetwork creates the bridge network name unless it exists
// (runtime.DatabaseRuntime).
func (r *Runtime) EnsureNetwork(ctx context.Context, name string, labels map[string]string) error {
	_, err := r.c.EnsureNetwork(ctx, name, labels)
	return err
}

// ContainerIP returns the container's address on network
// (runtime.DatabaseRuntime).
func (r *Runtime) ContainerIP(ctx context.Context, id, network string) (string, error) {
	st, err := r.c.Inspect(ctx, id)
	if err != nil {
		return "", err
	}
	ip := st.IPs[network]
	if ip == "" {
		return "", fmt.Errorf("container %s has no address on network %s", id, network)
	}
	return ip, nil
}

var _ runtime.EgressRuntime = (*Runtime)(nil)

// Networks lists the engine's networks (runtime.EgressRuntime).
func (r *Runtime) Networks(ctx context.Context) ([]runtime.NetworkState, error) {
	list, err := r.c.Networks(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]runtime.NetworkState, 0, len(list))
	for _, n := range list {
		st := runtime.NetworkState{Name: n.Name, Labels: n.Labels}
		for _, s := range n.Subnets {
			// An IPv6 or unparsable subnet cannot overlap the IPv4 pool.
			if p, err := netip.ParsePrefix(s); err == nil {
				st.Subnets = append(st.Subnets, p.Masked())
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// NetworkMembers returns the names of the containers on the network, in
// any state (runtime.EgressRuntime).
func (r *Runtime) NetworkMembers(ctx context.Context, network string) ([]string, error) {
	return r.c.NetworkMembers(ctx, network)
}

// CreateIsolatedNetwork creates a bridge with inter-container traffic off
// on spec.Subnet (runtime.EgressRuntime); a name already taken wraps
// runtime.ErrNetworkExists.
func (r *Runtime) CreateIsolatedNetwork(ctx context.Context, spec runtime.NetworkSpec) error {
	err := r.c.CreateIsolatedNetwork(ctx, spec.Name, spec.Subnet.String(), spec.Labels)
	if errors.Is(err, ErrNetworkExists) {
		return fmt.Errorf("%w: %w", runtime.ErrNetworkExists, err)
	}
	return err
}

// RemoveNetwork removes a network; a missing one is no error
// (runtime.EgressRuntime).
func (r *Runtime) RemoveNetwork(ctx context.Context, name string) error {
	return r.c.RemoveNetwork(ctx, name)
}

// Engine returns the runtime with every ability it has, for a worker
// (orchestrator.NewWorker).
func (r *Runtime) Engine() runtime.Engine {
	return runtime.Engine{Runtime: r, Egress: r, Databases: r, Updater: r, ImageStore: r, Freezer: r, Archiver: r}
}
