package orchestrator

import (
	"context"

	"github.com/sandox/sandox/services/orchestrator/webhook"
)

// relayWebhooks posts job exits to their webhooks (package webhook) until
// ctx ends; with no allowlist it does nothing. The relays of all workers
// share one durable consumer.
func (w *Worker) relayWebhooks(ctx context.Context) {
	cfg := webhook.DefaultConfig()
	cfg.Allow = w.cfg.WebhookAllow
	if err := webhook.New(w.js, cfg, w.log).Run(ctx); err != nil {
		w.log.Warn("webhook relay", "err", err)
	}
}
