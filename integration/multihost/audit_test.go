package multihost

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/audit"
)

// auditCommands replays the audit log as `sandox audit` does and returns
// the command entries of the run's groups (group ids start with prefix),
// in the log's order.
func auditCommands(t *testing.T, js jetstream.JetStream, prefix string) []audit.Entry {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out []audit.Entry
	err := audit.Replay(ctx, js, audit.Filter{Kinds: []string{string(audit.KindCommand)}}, false, func(e audit.Entry) error {
		if strings.HasPrefix(e.GroupID, prefix) {
			out = append(out, e)
		}
		return nil
	})
	require.NoError(t, err, "audit replay")
	return out
}

// assertCommandsOnce checks that every command appears once in entries,
// and that each sandbox was created and started once and each group
// created, started and ended once by its client (commands a worker makes
// of a group command, such as the end of a group's part on one host, have
// ids of their own: cmd.ID + "-end-" + host).
func assertCommandsOnce(t *testing.T, entries []audit.Entry, groups []string, runs []*sandboxRun) {
	t.Helper()
	byID := map[string]int{}
	byTarget := map[string]int{}
	for _, e := range entries {
		byID[e.CommandID]++
		if strings.Contains(e.CommandID, "-end-") || strings.Contains(e.CommandID, "-create-") || strings.Contains(e.CommandID, "-start-") {
			continue // a worker's part of a group command
		}
		target := e.GroupID
		if e.SandboxID != "" {
			target = e.SandboxID
		}
		byTarget[e.What+" "+target]++
	}
	for id, n := range byID {
		assert.Equal(t, 1, n, "command %s in the audit log", id)
	}
	for _, g := range groups {
		for _, kind := range []string{"create_group", "start_group", "end_group"} {
			assert.Equal(t, 1, byTarget[kind+" "+g], "%s of group %s in the audit log", kind, g)
		}
	}
	// A command the client sent again (retry) is another command: as many
	// as it sent at most, of which one at least reached a worker.
	for _, r := range runs {
		for kind, tries := range map[string]int{"create_sandbox": r.creates, "start_sandbox": r.starts} {
			n := byTarget[kind+" "+r.id]
			least := 1
			if r.createErr != nil || kind == "start_sandbox" && r.startErr != nil {
				least = 0 // every try may have failed to reach the stream
			}
			assert.True(t, n >= least && n <= tries, "%s of sandbox %s: %d in the audit log, %d sent", kind, r.id, n, tries)
		}
	}
}

// recordsInStream counts, straight from the stream (as `nats stream get`
// would, not through the replay), the records of each command of the run's
// groups: more than one means it was redelivered after its worker died.
func recordsInStream(t *testing.T, js jetstream.JetStream, prefix string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := js.Stream(ctx, schemas.EventStream)
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{schemas.CommandRecordSubject("*")}})
	require.NoError(t, err)
	n := map[string]int{}
	for {
		msg, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second))
		if err != nil {
			break // read all there is
		}
		var rec schemas.CommandRecord
		require.NoError(t, json.Unmarshal(msg.Data(), &rec))
		if strings.HasPrefix(rec.Command.GroupID, prefix) {
			n[rec.Command.ID]++
		}
		if md, err := msg.Metadata(); err == nil && md.Sequence.Stream >= info.State.LastSeq {
			break
		}
	}
	return n
}
