package runtime

import (
	"context"
	"io"
	"time"

	"github.com/sandox/sandox/schemas"
)

// The container engine as the orchestrator needs it, split by concern. A
// worker is given one Runtime; each part of the worker uses only the
// concern it needs. internal/docker implements Runtime for the Docker
// engine (docker.Runtime); the unit tests implement it in memory.

// Images finds and builds sandbox images.
type Images interface {
	// ImageID returns the id of the image ref, or an error wrapping
	// ErrNotFound.
	ImageID(ctx context.Context, ref string) (string, error)
	// Build builds an image and writes its progress to progress (which
	// may be nil). It blocks until the build ends.
	Build(ctx context.Context, spec ImageBuild, progress io.Writer) error
}

// Containers creates and drives sandbox containers.
type Containers interface {
	// Create creates a container (not started) and returns its id.
	Create(ctx context.Context, spec ContainerSpec) (string, error)
	// Start starts a created container.
	Start(ctx context.Context, id string) error
	// Restart kills a container's processes at once and starts it again.
	Restart(ctx context.Context, id string) error
	// Kill stops a container at once; a stopped one is no error.
	Kill(ctx context.Context, id string) error
	// Remove stops and removes a container; a missing one is no error.
	Remove(ctx context.Context, id string) error
}

// ContainerReader reads what the engine knows of containers.
type ContainerReader interface {
	// Inspect returns a container's state; a missing container wraps
	// ErrNotFound.
	Inspect(ctx context.Context, id string) (ContainerState, error)
	// List returns the containers, running or not, that carry every label
	// in labels ("key=value" or "key").
	List(ctx context.Context, labels ...string) ([]ContainerState, error)
	// Logs returns the last tail lines a container wrote.
	Logs(ctx context.Context, id string, tail int) (string, error)
	// Stats reads a container's CPU, memory and process use.
	Stats(ctx context.Context, id string) (schemas.SandboxUsage, error)
}

// Volumes makes and removes sandbox workspace volumes.
type Volumes interface {
	// CreateVolume creates a named volume.
	CreateVolume(ctx context.Context, spec VolumeSpec) error
	// RemoveVolume removes a volume; a missing one is no error.
	RemoveVolume(ctx context.Context, name string) error
}

// EventSource streams the life events of containers.
type EventSource interface {
	// Events streams the events of containers that carry every label, from
	// since, until ctx ends or the stream fails; the event channel is then
	// closed and, when the stream failed, the error channel says why.
	Events(ctx context.Context, since time.Time, labels ...string) (<-chan Event, <-chan error)
}

// HostReader describes the machine the engine runs containers on.
type HostReader interface {
	Host(ctx context.Context) (Host, error)
}

// Runtime is every concern a worker drives.
type Runtime interface {
	Images
	Containers
	ContainerReader
	Volumes
	EventSource
	HostReader
}

// ErrNotFound reports an image, container, network or volume the runtime
// does not have. It is the not-found class of the one set of error
// classes, schemas.CodeNotFound (its words: "not found"): a runtime wraps
// it with the object it looked for, and errors.Is(err, ErrNotFound) and
// errors.Is(err, schemas.CodeNotFound) are the same test. The worker does
// not pass such an error on as a not_found answer: wireError makes any
// error without a *schemas.Error internal, since not_found on the wire
// says that a group or sandbox does not exist.
var ErrNotFound error = schemas.CodeNotFound

// ImageBuild is an image to build from an in-memory build context.
type ImageBuild struct {
	// Tag names the image.
	Tag string
	// Files is the build context: path inside the context to content. It
	// holds "Dockerfile".
	Files map[string][]byte
	// Labels are added to the image.
	Labels map[string]string
}

// ContainerSpec is a sandbox container to create.
type ContainerSpec struct {
	Name    string
	Image   string
	Labels  map[string]string
	User    string
	Env     []string
	Network string

	// Limits; zero means none.
	NanoCPUs    int64
	CPUSet      string
	MemoryBytes int64
	PIDs        int64

	// ReadOnlyRoot mounts the image's file system read-only.
	ReadOnlyRoot bool
	// Hardened drops every capability and forbids gaining privileges.
	Hardened bool
	// Init runs the engine's init as PID 1, which reaps orphans.
	Init bool
	// Tmpfs maps a path to its mount options ("size=64m,mode=1777").
	Tmpfs map[string]string
	// Volumes maps a named volume to the path it is mounted at.
	Volumes map[string]string
	// ReadOnlyVolumes maps a named volume to the path it is mounted at,
	// read-only (the NATS socket's).
	ReadOnlyVolumes map[string]string
	// Binds are host paths mounted into the container.
	Binds []Bind
	// Runtime is the OCI runtime ("runsc"); "" is the engine's default.
	Runtime string
}

// Bind mounts the host path Source at Target in a container.
type Bind struct {
	Source   string
	Target   string
	ReadOnly bool
}

// VolumeSpec is a named volume to create. With a Device it mounts that
// block device (a sandbox's disk) of file system type FSType.
type VolumeSpec struct {
	Name   string
	Labels map[string]string
	Device string
	FSType string
}

// ContainerStatus is the engine's word for where a container is in its life.
type ContainerStatus string

// The container statuses the orchestrator tells apart.
const (
	StatusCreated  ContainerStatus = "created"
	StatusRunning  ContainerStatus = "running"
	StatusExited   ContainerStatus = "exited"
	StatusRemoving ContainerStatus = "removing"
	StatusDead     ContainerStatus = "dead"
)

// ContainerState is what the engine knows of a container and its process.
type ContainerState struct {
	ID        string
	Name      string
	Status    ContainerStatus
	Running   bool
	OOMKilled bool
	ExitCode  int
	Labels    map[string]string
}

// EventKind names a container event.
type EventKind string

// The container events the orchestrator handles.
const (
	// ContainerDied: the container's main process exited.
	ContainerDied EventKind = "die"
	// ContainerOOM: the kernel killed a process of the container for memory.
	ContainerOOM EventKind = "oom"
)

// Event is a change in the life of a container.
type Event struct {
	Kind        EventKind
	ContainerID string
	Labels      map[string]string
	// ExitCode is set on ContainerDied.
	ExitCode int
	Time     time.Time
}

// Host is the engine's view of its machine.
type Host struct {
	// ID is the engine's unique id: workers on one engine share a ledger.
	ID          string
	CPUs        int
	MemoryBytes int64
}

// ContainerName is the Docker name of a sandbox's container.
func ContainerName(sandboxID string) string { return "sandox-sb-" + sandboxID }

// VolumeName is the Docker name of a sandbox's workspace volume.
func VolumeName(sandboxID string) string { return "sandox-ws-" + sandboxID }
