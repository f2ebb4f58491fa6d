package state

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// watchRetention bounds SANDOX_WATCH: a day of file events, at most 256
// MiB, the oldest dropped first. Events are small and a reader that
// resumes does so within minutes; what must last goes to job output.
var watchRetention = Retention{MaxAge: 24 * time.Hour, MaxBytes: 256 << 20}

// setupWatchStream creates, or updates, the stream of the sandboxes' file
// watches (schemas.WatchStream) with replicas copies.
func setupWatchStream(ctx context.Context, js jetstream.JetStream, replicas int) error {
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        schemas.WatchStream,
		Description: "sandox file watches: the start, events and stop of every sandbox's watches, read back from any sequence",
		Subjects:    []string{schemas.WatchStreamSubjects},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      watchRetention.MaxAge,
		MaxBytes:    watchRetention.MaxBytes,
		// Executors publish with Nats-Msg-Id and retry until stored: a
		// repeat within the window is dropped (readers also skip an
		// event whose number they passed).
		Duplicates: 2 * time.Minute,
		Replicas:   replicas,
	}); err != nil {
		return fmt.Errorf("stream %s: %w", schemas.WatchStream, err)
	}
	return nil
}
