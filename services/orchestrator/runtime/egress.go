package runtime

import (
	"context"
	"errors"
	"net/netip"
)

// EgressRuntime is what a runtime needs to spread sandboxes with open
// egress over several bridges (docs/security.md, "Open egress at
// density"). docker.Runtime has it; without it every such sandbox joins
// Config.EgressNetwork, as before.
type EgressRuntime interface {
	// Networks lists the engine's networks.
	Networks(ctx context.Context) ([]NetworkState, error)
	// NetworkMembers returns the names of the containers attached to the
	// network, in any state (created ones too).
	NetworkMembers(ctx context.Context, network string) ([]string, error)
	// CreateIsolatedNetwork creates a bridge with inter-container traffic
	// off on spec.Subnet. A name already taken wraps ErrNetworkExists.
	CreateIsolatedNetwork(ctx context.Context, spec NetworkSpec) error
	// RemoveNetwork removes a network; a missing one is no error, one
	// that still has members is.
	RemoveNetwork(ctx context.Context, name string) error
}

// ErrNetworkExists reports a network name that is already taken.
var ErrNetworkExists = errors.New("network exists")

// NetworkState is a network as the engine has it.
type NetworkState struct {
	Name    string
	Subnets []netip.Prefix
	Labels  map[string]string
}

// NetworkSpec is an isolated bridge to create.
type NetworkSpec struct {
	Name   string
	Subnet netip.Prefix
	Labels map[string]string
}
