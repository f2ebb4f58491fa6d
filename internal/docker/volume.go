package docker

import (
	"context"
	"fmt"

	"github.com/docker/docker/api/types/volume"
)

// CreateVolume creates a named local volume. opts are the local driver's
// options (for example type, device and o for a size-limited mount).
func (c *Client) CreateVolume(ctx context.Context, name string, labels, opts map[string]string) error {
	_, err := c.api.VolumeCreate(ctx, volume.CreateOptions{Name: name, Driver: "local", Labels: labels, DriverOpts: opts})
	if err != nil {
		return fmt.Errorf("create volume %s: %w", name, err)
	}
	return nil
}

// RemoveVolume removes a volume; a missing one is not an error.
func (c *Client) RemoveVolume(ctx context.Context, name string) error {
	if err := c.api.VolumeRemove(ctx, name, true); err != nil && !isNotFound(err) {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	return nil
}
