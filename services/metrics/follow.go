package metrics

import (
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/services/audit"
)

// newFollower returns the follower of the audit stream that counts every
// entry and population event into sc, and resets sc when the stream was
// made again. The follower calls sc one call at a time.
func newFollower(js jetstream.JetStream, sc *streamCounters, log *slog.Logger) *audit.Follower {
	return audit.NewFollower(js, audit.Handlers{Entry: sc.count, Population: sc.population, Reset: sc.reset}, log)
}
