package orchestrator

import (
	"context"
	"time"
)

// every runs job every d until ctx is done. The worker's periodic duties
// (heartbeats, lifetime sweeps, image collection) run on it.
func every(ctx context.Context, d time.Duration, job func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			job()
		}
	}
}
