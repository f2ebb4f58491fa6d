package runtime

import (
	"context"
)

// DatabaseRuntime is what a runtime needs to run a group's databases: a
// network of their own and the addresses on it. docker.Runtime has it.
type DatabaseRuntime interface {
	EnsureNetwork(ctx context.Context, name string, labels map[string]string) error
	ContainerIP(ctx context.Context, id, network string) (string, error)
}
