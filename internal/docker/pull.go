package docker

import (
	"context"
	"fmt"
	"io"

	"github.com/docker/docker/api/types/image"
)

// Pull pulls ref from its registry and writes the engine's progress to
// progress (which may be nil). It blocks until the pull ends; on a machine
// with no registry it fails (the error carries the engine's message).
func (c *Client) Pull(ctx context.Context, ref string, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	rc, err := c.api.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	defer rc.Close()
	// The stream is JSON progress lines; an error arrives as a line too.
	if err := readBuildStream(rc, progress); err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	return nil
}

// Tag gives the image src the extra name dst.
func (c *Client) Tag(ctx context.Context, src, dst string) error {
	if err := c.api.ImageTag(ctx, src, dst); err != nil {
		return notFound(err, fmt.Sprintf("tag %s as %s", src, dst))
	}
	return nil
}
