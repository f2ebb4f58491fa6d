package dashboard

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/services/audit"
)

// History is a sandbox's session from the audit log: every entry about it
// in order, each batch with its actions and their observations. Last is
// the stream sequence of its newest entry, from which the page follows.
type History struct {
	Turns []audit.Turn
	Last  uint64
	// NoLog is true when the audit stream does not exist yet.
	NoLog bool
}

// readHistory replays the audit log for the sandbox id and rebuilds its
// session (audit.Session). It reads the whole log, as `sandox audit
// -session` does, and blocks until it has.
func readHistory(ctx context.Context, js jetstream.JetStream, id string) (History, error) {
	var entries []audit.Entry
	err := audit.Replay(ctx, js, audit.Filter{Sandbox: id}, false, func(e audit.Entry) error {
		entries = append(entries, e)
		return nil
	})
	if errors.Is(err, audit.ErrNoLog) {
		return History{NoLog: true}, nil
	} else if err != nil {
		return History{}, err
	}
	h := History{Turns: audit.Session(entries)}
	if n := len(entries); n > 0 {
		h.Last = entries[n-1].Seq
	}
	return h, nil
}
