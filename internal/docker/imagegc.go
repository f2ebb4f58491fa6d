package docker

import (
	"context"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/errdefs"

	"github.com/sandox/sandox/services/orchestrator/runtime"
)

var _ runtime.ImageStore = (*Runtime)(nil)

// ListImages returns the images tagged in repo.
func (r *Runtime) ListImages(ctx context.Context, repo string) ([]runtime.Image, error) {
	list, err := r.c.api.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("reference", repo+":*"))})
	if err != nil {
		return nil, fmt.Errorf("list images %s: %w", repo, err)
	}
	out := make([]runtime.Image, 0, len(list))
	for _, s := range list {
		out = append(out, runtime.Image{ID: s.ID, Tags: s.RepoTags, Created: time.Unix(s.Created, 0)})
	}
	return out, nil
}

// RemoveImage removes an image by id, without force: an image a container
// uses is runtime.ErrInUse.
func (r *Runtime) RemoveImage(ctx context.Context, id string) error {
	_, err := r.c.api.ImageRemove(ctx, id, image.RemoveOptions{PruneChildren: true})
	switch {
	case err == nil:
		return nil
	case errdefs.IsConflict(err):
		return fmt.Errorf("image %s: %w: %w", id, runtime.ErrInUse, err)
	case errdefs.IsNotFound(err):
		return fmt.Errorf("image %s: %w: %w", id, runtime.ErrNotFound, err)
	}
	return fmt.Errorf("remove image %s: %w", id, err)
}
