package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
)

// callerOf reads who sent a command from its headers: the signature
// covers the command id (auth.CallerOf).
func callerOf(hdr nats.Header, commandID, account string) schemas.Caller {
	return auth.CallerOf(hdr, []byte(commandID), account)
}

// recordTimeout bounds how long a command waits for its audit record to be
// stored: through a leader election of the event stream, not for ever.
const recordTimeout = 10 * time.Second

// recordCommand stores the audit record of a command the worker took,
// before it runs. It is a JetStream publish, acknowledged once the record
// is stored (on a quorum of a replicated stream): a plain publish left
// nothing in the log when the server that took it died before it stored it,
// and the command ran unrecorded. The message id (command and delivery)
// keeps a retried publish from being stored twice. A record that cannot be
// stored within recordTimeout is logged and the command runs: the audit
// log must not stop the sandboxes.
func (w *Worker) recordCommand(ctx context.Context, cmd schemas.Command, hdr nats.Header, delivery uint64) {
	rec := schemas.CommandRecord{
		Command:  cmd,
		Caller:   callerOf(hdr, cmd.ID, w.account),
		Worker:   w.cfg.Worker,
		Delivery: delivery,
		Time:     time.Now().UTC(),
	}
	data, err := json.Marshal(rec)
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, recordTimeout)
		defer cancel()
		_, err = w.js.Publish(ctx, schemas.CommandRecordSubject(cmd.ID), data,
			jetstream.WithMsgID(fmt.Sprintf("record-%s-%d", cmd.ID, delivery)),
			jetstream.WithRetryAttempts(int(recordTimeout/(250*time.Millisecond))),
			jetstream.WithRetryWait(250*time.Millisecond))
	}
	if err != nil {
		w.log.Error("record command: it runs without an audit record", "command", cmd.ID, "err", fmt.Errorf("audit: %w", err))
	}
}
