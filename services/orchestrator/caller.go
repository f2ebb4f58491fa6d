package orchestrator

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
)

// callerOf reads who sent a command from its headers: the signature
// covers the command id (auth.CallerOf).
func callerOf(hdr nats.Header, commandID, account string) schemas.Caller {
	return auth.CallerOf(hdr, []byte(commandID), account)
}

// recordCommand publishes the audit record of a command the worker took,
// before it runs. Losing a record is logged, not fatal.
func (w *Worker) recordCommand(cmd schemas.Command, hdr nats.Header, delivery uint64) {
	rec := schemas.CommandRecord{
		Command:  cmd,
		Caller:   callerOf(hdr, cmd.ID, w.account),
		Worker:   w.cfg.Worker,
		Delivery: delivery,
		Time:     time.Now().UTC(),
	}
	data, err := json.Marshal(rec)
	if err == nil {
		err = w.nc.Publish(schemas.CommandRecordSubject(cmd.ID), data)
	}
	if err != nil {
		w.log.Warn("record command", "command", cmd.ID, "err", fmt.Errorf("audit: %w", err))
	}
}
