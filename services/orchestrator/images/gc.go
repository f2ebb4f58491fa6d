package images

import (
	"context"
	"errors"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"log/slog"
	"slices"
	"time"
)

// ToolsImageRepo is the repository of the images the orchestrator builds
// for sandboxes with tool files or families that need packages.
const ToolsImageRepo = "sandox/sandbox-tools"

// GC says which unused ToolsImageRepo images are removed: those beyond
// the Keep newest, and those older than MaxAge. Interval 0 turns it off.
type GC struct {
	Interval time.Duration
	MaxAge   time.Duration
	Keep     int
}

// DefaultGC checks every hour, keeps the 20 newest and removes
// unused images built more than a week ago.
func DefaultGC() GC {
	return GC{Interval: time.Hour, MaxAge: 7 * 24 * time.Hour, Keep: 20}
}

// CollectEvery runs Collect with policy every policy.Interval until ctx is
// done, and logs what it removed and what failed. It blocks; a nil store
// or an Interval of 0 returns at once.
func CollectEvery(ctx context.Context, store runtime.ImageStore, policy GC, log *slog.Logger) {
	if store == nil || policy.Interval <= 0 {
		return
	}
	t := time.NewTicker(policy.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		removed, err := Collect(ctx, store, policy, time.Now())
		if len(removed) > 0 {
			log.Info("removed unused sandbox images", "images", removed)
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("image garbage collection", "err", err)
		}
	}
}

// Collect removes the images of ToolsImageRepo that policy lets go
// and returns their ids. An image in use is kept (the engine refuses to
// remove it), whatever its age or rank; so is one removed meanwhile by
// another worker. Age is counted from the image's build: an image reused
// for a long time is built again after it is removed.
func Collect(ctx context.Context, store runtime.ImageStore, policy GC, now time.Time) ([]string, error) {
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
