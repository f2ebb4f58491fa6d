package docker

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/pkg/stdcopy"
)

// ContainerSpec is a container to create.
type ContainerSpec struct {
	Name    string
	Image   string
	Env     []string
	Labels  map[string]string
	User    string
	Network string
	// Aliases are extra names of the container on Network.
	Aliases []string
	Cmd     []string
	WorkDir string

	// Limits. Zero means none.
	NanoCPUs  int64
	CPUSet    string
	Memory    int64
	PidsLimit int64

	// ReadOnlyRoot mounts the image's file system read-only.
	ReadOnlyRoot bool
	// Tmpfs maps a path to its mount options ("size=64m,mode=1777").
	Tmpfs map[string]string
	// Binds are "host-or-volume:container[:opts]" mounts.
	Binds []string
	// CapAdd adds capabilities ("SYS_ADMIN"); DeviceRules lets the
	// container use devices ("b 7:* rwm"). Only the orchestrator, which
	// attaches loop devices, gets any.
	CapAdd      []string
	DeviceRules []string
	// Mounts are volume or bind mounts.
	Mounts []mount.Mount
	// Hardened drops every capability and forbids gaining privileges.
	Hardened bool
	// PublishLocal maps container ports ("4222/tcp") to host ports on
	// 127.0.0.1 ("0" picks a free one).
	PublishLocal map[string]string
	// RestartUnlessStopped restarts the container when it exits.
	RestartUnlessStopped bool
	// Runtime is the OCI runtime ("runsc"); "" is the engine's default.
	Runtime string
	// Init runs the engine's init (tini) as PID 1, which reaps orphaned
	// processes so that they do not pile up as zombies.
	Init bool
}

// Create creates the container (not started) and returns its id.
func (c *Client) Create(ctx context.Context, spec ContainerSpec) (string, error) {
	cfg := &container.Config{
		Image:      spec.Image,
		Env:        spec.Env,
		Labels:     spec.Labels,
		User:       spec.User,
		Cmd:        spec.Cmd,
		WorkingDir: spec.WorkDir,
	}
	host := &container.HostConfig{
		NetworkMode:    container.NetworkMode(spec.Network),
		ReadonlyRootfs: spec.ReadOnlyRoot,
		Runtime:        spec.Runtime,
		CapAdd:         spec.CapAdd,
		Tmpfs:          spec.Tmpfs,
		Binds:          spec.Binds,
		Mounts:         spec.Mounts,
		Resources: container.Resources{
			DeviceCgroupRules: spec.DeviceRules,
			NanoCPUs:          spec.NanoCPUs,
			CpusetCpus:        spec.CPUSet,
			Memory:            spec.Memory,
		},
	}
	if spec.Memory > 0 {
		host.Resources.MemorySwap = spec.Memory // no swap beyond the limit
	}
	if spec.Init {
		host.Init = &spec.Init
	}
	if spec.PidsLimit > 0 {
		host.Resources.PidsLimit = &spec.PidsLimit
	}
	if spec.Hardened {
		host.CapDrop = []string{"ALL"}
		host.SecurityOpt = []string{"no-new-privileges"}
	}
	if spec.RestartUnlessStopped {
		host.RestartPolicy = container.RestartPolicy{Name: container.RestartPolicyUnlessStopped}
	}
	if err := publishLocal(cfg, host, spec.PublishLocal); err != nil {
		return "", fmt.Errorf("create container %s: %w", spec.Name, err)
	}
	var netCfg *network.NetworkingConfig
	if spec.Network != "" && len(spec.Aliases) > 0 {
		netCfg = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
			spec.Network: {Aliases: spec.Aliases},
		}}
	}
	resp, err := c.api.ContainerCreate(ctx, cfg, host, netCfg, nil, spec.Name)
	if err != nil {
		return "", fmt.Errorf("create container %s: %w", spec.Name, err)
	}
	return resp.ID, nil
}

// Start starts a created container.
func (c *Client) Start(ctx context.Context, id string) error {
	if err := c.api.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return notFound(err, "start container "+id)
	}
	return nil
}

// Remove stops and removes a container with its anonymous volumes. A
// container that does not exist is not an error.
func (c *Client) Remove(ctx context.Context, id string) error {
	err := c.api.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("remove container %s: %w", id, err)
	}
	return nil
}

// State is what the engine knows of a container's process.
type State struct {
	ID         string
	Name       string
	Running    bool
	OOMKilled  bool
	ExitCode   int
	Error      string
	Status     string
	StartedAt  time.Time
	FinishedAt time.Time
	Labels     map[string]string
	// Env is the container's environment, the image's and its own.
	Env []string
	// IPs maps network name to the container's address on it.
	IPs map[string]string
	// Ports maps "4222/tcp" to the host port it is published on.
	Ports map[string]string
}

// Inspect returns the container's state; a missing container wraps runtime.ErrNotFound.
func (c *Client) Inspect(ctx context.Context, id string) (State, error) {
	info, err := c.api.ContainerInspect(ctx, id)
	if err != nil {
		return State{}, notFound(err, "container "+id)
	}
	st := State{ID: info.ID, Name: strings.TrimPrefix(info.Name, "/"), IPs: map[string]string{}, Ports: map[string]string{}}
	if info.State != nil {
		st.Running = info.State.Running
		st.OOMKilled = info.State.OOMKilled
		st.ExitCode = info.State.ExitCode
		st.Error = info.State.Error
		st.Status = info.State.Status
		st.StartedAt, _ = time.Parse(time.RFC3339Nano, info.State.StartedAt)
		st.FinishedAt, _ = time.Parse(time.RFC3339Nano, info.State.FinishedAt)
	}
	if info.Config != nil {
		st.Labels, st.Env = info.Config.Labels, info.Config.Env
	}
	if info.NetworkSettings != nil {
		for name, ep := range info.NetworkSettings.Networks {
			if ep != nil {
				st.IPs[name] = ep.IPAddress
			}
		}
		for port, bindings := range info.NetworkSettings.Ports {
			if len(bindings) > 0 {
				st.Ports[string(port)] = bindings[0].HostPort
			}
		}
	}
	return st, nil
}

// Logs returns the last tail lines the container wrote, stdout and stderr
// interleaved.
func (c *Client) Logs(ctx context.Context, id string, tail int) (string, error) {
	rc, err := c.api.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: fmt.Sprint(tail)})
	if err != nil {
		return "", notFound(err, "logs of container "+id)
	}
	defer rc.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, rc); err != nil {
		return out.String(), fmt.Errorf("read logs of container %s: %w", id, err)
	}
	return out.String(), nil
}

// List returns the containers, running or not, that carry every label in
// labels ("key=value" or "key").
func (c *Client) List(ctx context.Context, labels ...string) ([]State, error) {
	f := filters.NewArgs()
	for _, l := range labels {
		f.Add("label", l)
	}
	list, err := c.api.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	out := make([]State, 0, len(list))
	for _, s := range list {
		name := ""
		if len(s.Names) > 0 {
			name = strings.TrimPrefix(s.Names[0], "/")
		}
		out = append(out, State{ID: s.ID, Name: name, Running: s.State == "running", Status: s.Status, Labels: s.Labels})
	}
	return out, nil
}

// Restart kills a container's processes at once and starts it again.
func (c *Client) Restart(ctx context.Context, id string) error {
	zero := 0
	if err := c.api.ContainerRestart(ctx, id, container.StopOptions{Timeout: &zero}); err != nil {
		return notFound(err, "restart container "+id)
	}
	return nil
}

// Kill stops a container at once with SIGKILL; a stopped one is no error.
func (c *Client) Kill(ctx context.Context, id string) error {
	err := c.api.ContainerKill(ctx, id, "KILL")
	if err != nil && !isNotFound(err) && !strings.Contains(err.Error(), "is not running") {
		return fmt.Errorf("kill container %s: %w", id, err)
	}
	return nil
}
