package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// clusterNotReady reports whether err, from a JetStream request made while
// ctx was live, says that the cluster could not answer yet: wire.BusUnavailable,
// a request that ran out of its own time (the jetstream package gives each
// one 5 s), or JetStream's "system temporarily unavailable" (10008). Not
// "JetStream not enabled" (also a 503), which waiting does not mend.
func clusterNotReady(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var apiErr *jetstream.APIError
	return wire.BusUnavailable(err) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &apiErr) && apiErr.ErrorCode == jsErrCodeClusterNotAvailable
}

// jsErrCodeClusterNotAvailable is the server's JSClusterNotAvailErr, which
// the jetstream package names no constant for.
const jsErrCodeClusterNotAvailable jetstream.ErrorCode = 10008

// waitForBus runs fn until it succeeds, fails for another reason than
// clusterNotReady, or wait has passed: a worker that starts while the
// cluster elects its leaders (seconds after a node died) waits for them
// instead of exiting. Each retry is logged.
func waitForBus(ctx context.Context, wait time.Duration, log *slog.Logger, what string, fn func(context.Context) error) error {
	deadline := time.Now().Add(wait)
	backoff := 250 * time.Millisecond
	for {
		err := fn(ctx)
		if err == nil || !clusterNotReady(ctx, err) || time.Now().After(deadline) {
			return err
		}
		log.Warn("JetStream is not answering yet; trying again", "what", what, "err", err, "gives_up_in", time.Until(deadline).Round(time.Second))
		pause := backoff/2 + rand.N(backoff/2)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}
