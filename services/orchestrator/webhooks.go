package orchestrator

import (
	"context"
	"time"

	"github.com/sandox/sandox/services/orchestrator/webhook"
)

// relayWebhooks posts job exits to their webhooks (package webhook) until
// ctx ends; with no allowlist it does nothing. The relays of all workers
// share one durable consumer.
func (w *Worker) relayWebhooks(ctx context.Context) {
	cfg := webhook.DefaultConfig()
	cfg.Allow = w.cfg.WebhookAllow
	// A relay that could not make or read its consumer (a cluster still
	// electing leaders) starts again rather than leaving webhooks off.
	for {
		err := webhook.New(w.js, cfg, w.log).Run(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		w.log.Warn("webhook relay stopped; starting it again", "err", err, "in", relayRetry)
		select {
		case <-ctx.Done():
			return
		case <-time.After(relayRetry):
		}
	}
}

// relayRetry is how long a failed webhook relay waits before it starts again.
const relayRetry = 5 * time.Second
