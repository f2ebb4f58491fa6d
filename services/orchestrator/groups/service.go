// Package groups carries out the group commands (create_group,
// start_group, end_group) and create_sandbox, which takes its group's
// lock, over every host: a group's sandboxes on this worker's host are
// made and ended by the sandbox lifecycle (package sandboxes), those on
// other hosts by their hosts' workers, to which the commands' parts are
// delegated.
package groups

import (
	"context"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/locks"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// Config is what a Service reads of the orchestrator's configuration.
type Config struct {
	// Host is the worker's host.
	Host string
	// MaxToolFileBytes bounds a tool file of a group or sandbox spec.
	MaxToolFileBytes int
	// HostLostAfter is how long a host may be silent and still count as
	// live: an end_group sends a part to each live host.
	HostLostAfter time.Duration
}

// Sandboxes is the sandbox lifecycle of this host. *sandboxes.Service
// implements it; its doc comments say what each call does.
type Sandboxes interface {
	Make(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string) (schemas.SandboxStatus, error)
	BuildImage(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec) (images.Resolved, error)
	MakeWithImage(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string, img *images.Resolved) (schemas.SandboxStatus, error)
	Start(ctx context.Context, st schemas.SandboxStatus, cmdID string) (schemas.SandboxStatus, error)
	End(ctx context.Context, id, cmdID string) (schemas.SandboxStatus, error)
	Forget(ctx context.Context, id, cmdID string) (schemas.SandboxStatus, error)
	RemoveResources(ctx context.Context, container, sandboxID string) error
	OwnLabels(filters ...string) []string
}

// Pools are this worker's warm pools. *pool.Pools implements it.
type Pools interface {
	Claim(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec, cmdID string) (schemas.SandboxStatus, bool, error)
	Wake()
	DropGroup(ctx context.Context, g schemas.GroupStatus)
}

// Databases runs the groups' databases. *groupdb.Databases implements it.
type Databases interface {
	Start(ctx context.Context, g schemas.GroupStatus) (schemas.GroupStatus, error)
	Populate(ctx context.Context, g schemas.GroupStatus) error
	Stop(ctx context.Context, g schemas.GroupStatus) error
}

// Placer chooses the host of a new sandbox. *placement.Placer implements
// it.
type Placer interface {
	Place(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec) (string, error)
}

// Hosts tells which hosts are this worker's and which are live.
// *placement.Hosts implements it.
type Hosts interface {
	Here(host string) bool
	Live(ctx context.Context, host string) bool
}

// Containers lists and removes the engine's containers: what a group left
// that the records do not know of.
type Containers interface {
	List(ctx context.Context, labels ...string) ([]runtime.ContainerState, error)
	Remove(ctx context.Context, id string) error
}

// Delegator has another host's workers run a part of a group command and
// waits for its result. *routing.Router implements it.
type Delegator interface {
	Delegate(ctx context.Context, host string, cmd schemas.Command) (schemas.CommandResult, error)
}

// Parts are what a Service acts through.
type Parts struct {
	Store      *state.Store
	Locks      *locks.Keyed
	Sandboxes  Sandboxes
	Pools      Pools
	Databases  Databases
	Placer     Placer
	Hosts      Hosts
	Containers Containers
	Delegator  Delegator
}

// Service carries out the group commands. It is safe for concurrent use:
// the commands on one group take its lock.
type Service struct {
	cfg       Config
	store     *state.Store
	locks     *locks.Keyed
	sandboxes Sandboxes
	pools     Pools
	databases Databases
	placer    Placer
	hosts     Hosts
	rt        Containers
	delegator Delegator
}

// New returns the group commands of cfg.Host over parts.
func New(cfg Config, parts Parts) *Service {
	return &Service{
		cfg: cfg, store: parts.Store, locks: parts.Locks, sandboxes: parts.Sandboxes, pools: parts.Pools,
		databases: parts.Databases, placer: parts.Placer, hosts: parts.Hosts, rt: parts.Containers, delegator: parts.Delegator,
	}
}

// resultError is the error of a delegated command's result, or err.
func resultError(res schemas.CommandResult, err error) error {
	if err != nil {
		return err
	}
	if res.Error != nil {
		return res.Error
	}
	return nil
}
