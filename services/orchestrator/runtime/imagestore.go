package runtime

import (
	"context"
	"errors"
	"time"
)

// ErrInUse reports an image that a container still uses.
var ErrInUse = errors.New("in use")

// Image is an image of the engine, as image garbage collection sees it.
type Image struct {
	ID      string
	Tags    []string
	Created time.Time
}

// ImageStore lists and removes images, for garbage collection. The Docker
// runtime implements it; a runtime that does not is never collected.
type ImageStore interface {
	// ListImages returns the images tagged in repo.
	ListImages(ctx context.Context, repo string) ([]Image, error)
	// RemoveImage removes an image by id, without force; ErrInUse when a
	// container (running or not) uses it, ErrNotFound when it is gone.
	RemoveImage(ctx context.Context, id string) error
}
