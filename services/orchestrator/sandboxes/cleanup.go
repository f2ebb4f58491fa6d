package sandboxes

import (
	"context"

	"github.com/sandox/sandox/services/orchestrator/cleanup"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// The resources of a sandbox, as named in cleanup errors and logs.
const (
	resRecord    = "record"
	resLedger    = "ledger allocation"
	resDisk      = "disk"
	resVolume    = "volume"
	resContainer = "container"
	resIdentity  = "identity"
	resEgress    = "egress proxy"
	resNetwork   = "empty egress networks"
)

// sandboxResources returns the full undo stack of an existing sandbox:
// running it revokes the sandbox's identity first, so that it is off the
// bus at once, then removes the container, the volume and the disk, and
// releases the ledger allocation; last it removes the bridges of open
// egress left empty. The sandbox's record is not on it.
func (s *Service) sandboxResources(container, sandboxID string) *cleanup.Stack {
	c := &cleanup.Stack{}
	c.Push(resNetwork, func(ctx context.Context) error { return s.isolation.Prune(ctx, runtime.ContainerName(sandboxID)) })
	c.Push(resLedger, func(ctx context.Context) error { return s.ledger.Release(ctx, sandboxID) })
	c.Push(resDisk, func(context.Context) error { return s.detachDisk(sandboxID) })
	c.Push(resVolume, func(ctx context.Context) error { return s.rt.RemoveVolume(ctx, runtime.VolumeName(sandboxID)) })
	c.Push(resEgress, func(context.Context) error { return s.egress.Close(sandboxID) })
	c.Push(resContainer, func(ctx context.Context) error { return s.rt.Remove(ctx, container) })
	c.Push(resIdentity, func(ctx context.Context) error { return s.ids.Revoke(ctx, sandboxID) })
	return c
}

// RemoveResources revokes a sandbox's identity, removes its
// container, volume and disk and releases its ledger allocation. It tries every one even when an earlier
// one fails, and returns the failures joined.
func (s *Service) RemoveResources(ctx context.Context, container, sandboxID string) error {
	return s.sandboxResources(container, sandboxID).Run(ctx)
}
