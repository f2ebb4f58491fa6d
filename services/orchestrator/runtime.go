package orchestrator

import (
	"context"
	"io"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/docker"
)

// Runtime is the container engine the orchestrator drives. *docker.Client
// implements it.
type Runtime interface {
	ImageID(ctx context.Context, ref string) (string, error)
	Build(ctx context.Context, spec docker.BuildSpec, progress io.Writer) error
	Create(ctx context.Context, spec docker.ContainerSpec) (string, error)
	Start(ctx context.Context, id string) error
	Remove(ctx context.Context, id string) error
	Inspect(ctx context.Context, id string) (docker.State, error)
	Logs(ctx context.Context, id string, tail int) (string, error)
	List(ctx context.Context, labels ...string) ([]docker.State, error)
	CreateVolume(ctx context.Context, name string, labels, opts map[string]string) error
	RemoveVolume(ctx context.Context, name string) error
	Host(ctx context.Context) (docker.Host, error)
	Stats(ctx context.Context, id string) (schemas.SandboxUsage, error)
	Restart(ctx context.Context, id string) error
	Kill(ctx context.Context, id string) error
	Events(ctx context.Context, since time.Time, labels ...string) (<-chan docker.Event, <-chan error)
}

var _ Runtime = (*docker.Client)(nil)

// Labels on everything the orchestrator creates.
const (
	LabelManaged = "dev.sandox.managed"
	LabelGroup   = "dev.sandox.group"
	LabelSandbox = "dev.sandox.sandbox"
)

// ContainerName is the Docker name of a sandbox's container.
func ContainerName(sandboxID string) string { return "sandox-sb-" + sandboxID }

// VolumeName is the Docker name of a sandbox's workspace volume.
func VolumeName(sandboxID string) string { return "sandox-ws-" + sandboxID }
