package orchestrator

import (
	"context"
	"errors"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"slices"
	"time"
)

// ToolsImageRepo is the repository of the images the orchestrator builds
// for sandboxes with tool files or families that need packages.
const ToolsImageRepo = "sandox/sandbox-tools"

// ImageGC says which unused ToolsImageRepo images are removed: those beyond
// the Keep newest, and those older than MaxAge. Interval 0 turns it off.
type ImageGC struct {
	Interval time.Duration
	MaxAge   time.Duration
	Keep     int
}

// DefaultImageGC checks every hour, keeps the 20 newest and removes
// unused images built more than a week ago.
func DefaultImageGC() ImageGC {
	return ImageGC{Interval: time.Hour, MaxAge: 7 * 24 * time.Hour, Keep: 20}
}

// collectImagesEvery runs collectImages every cfg.ImageGC.Interval until
// ctx is done, when the runtime can list and remove images.
func (w *Worker) collectImagesEvery(ctx context.Context) {
	store := w.images
	if store == nil || w.cfg.ImageGC.Interval <= 0 {
		return
	}
	every(ctx, w.cfg.ImageGC.Interval, func() {
		removed, err := collectImages(ctx, store, w.cfg.ImageGC, time.Now())
		if len(removed) > 0 {
			w.log.Info("removed unused sandbox images", "images", removed)
		}
		if err != nil && ctx.Err() == nil {
			w.log.Warn("image garbage collection", "err", err)
		}
	})
}

// collectImages removes the images of ToolsImageRepo that policy lets go
// and returns their ids. An image in use is kept (the engine refuses to
// remove it), whatever its age or rank; so is one removed meanwhile by
// another worker. Age is counted from the image's build: an image reused
// for a long time is built again after it is removed.
func collectImages(ctx context.Context, store runtime.ImageStore, policy ImageGC, now time.Time) ([]string, error) {
	images, err := store.ListImages(ctx, ToolsImageRepo)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(images, func(a, b runtime.Image) int { return b.Created.Compare(a.Created) })
	var removed []string
	var errs []error
	for i, img := range images {
		old := policy.MaxAge > 0 && now.Sub(img.Created) > policy.MaxAge
		if i < policy.Keep && !old {
			continue
		}
		switch err := store.RemoveImage(ctx, img.ID); {
		case err == nil:
			removed = append(removed, img.ID)
		case errors.Is(err, runtime.ErrInUse), errors.Is(err, runtime.ErrNotFound):
		default:
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}
