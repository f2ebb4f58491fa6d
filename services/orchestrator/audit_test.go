package orchestrator

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/audit"
	"github.com/sandox/sandox/services/auth"
)

const auditBatch = `{"terminal_tools.run": {"description": "look", "args": {"command": "ls"}}}`

// replayAll reads the whole audit log with f.
func replayAll(t *testing.T, h *harness, f audit.Filter) []audit.Entry {
	t.Helper()
	var got []audit.Entry
	require.NoError(t, audit.Replay(t.Context(), h.js, f, false, func(e audit.Entry) error {
		got = append(got, e)
		return nil
	}))
	return got
}

// TestAuditTrail drives a group through the SDK with a client identity of
// its own, sends one batch through the SDK and one with a plain _INBOX
// reply, makes the server refuse a publish, and reads it all back from
// SANDOX_EVENTS: every command once with its verified caller and its
// result, the events, both batches with their observations, the refusal
// with the refused user, and the sandbox's session action by action.
func TestAuditTrail(t *testing.T) {
	h := newHarness(t)
	ctx := t.Context()
	alice, err := h.authority.Mint("alice", auth.RoleClient, "")
	require.NoError(t, err)
	file, err := alice.File()
	require.NoError(t, err)
	credsFile := filepath.Join(t.TempDir(), "alice.creds")
	require.NoError(t, os.WriteFile(credsFile, file, 0o600))

	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "audited"}, sdk.WithURL(h.url), sdk.WithCredentials(credsFile))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	require.NoError(t, g.Start(ctx))
	sb, err := g.CreateSandbox(ctx, "sb-audit", sdk.SandboxOptions{})
	require.NoError(t, err)
	require.NoError(t, sb.Start(ctx))
	obs, err := sb.SendActionsJSON(ctx, []byte(auditBatch))
	require.NoError(t, err)
	require.Len(t, obs, 1)

	req := nats.NewMsg(schemas.ActionsSubject("sb-audit"))
	req.Header.Set(schemas.HeaderBatchID, "by-hand")
	req.Data = []byte(auditBatch)
	_, err = h.nc.RequestMsg(req, 5*time.Second)
	require.NoError(t, err)

	// A client may not send notices: the server refuses, and records it.
	require.NoError(t, h.nc.Publish(schemas.NoticeSubject("sb-audit"), []byte(`{}`)))
	require.NoError(t, h.nc.Flush())

	// A command without a caller (the harness signs nothing).
	require.Nil(t, h.send(h.command(schemas.EndSandbox, "audited", "sb-audit")).Error)
	require.NoError(t, g.End(ctx))

	// The stream stores records apart from delivering them: wait until the
	// trail holds the last command, end_group, and a result for every
	// command it holds.
	var entries []audit.Entry
	h.eventually("every command and its result in the trail", func() bool {
		entries = replayAll(t, h, audit.Filter{Group: "audited"})
		open, ended := 0, false
		for _, e := range entries {
			switch e.Kind {
			case audit.KindCommand:
				open++
				ended = ended || e.What == string(schemas.EndGroup)
			case audit.KindResult:
				open--
			}
		}
		return ended && open == 0
	})
	commands := map[string]audit.Entry{}
	results := map[string]int{}
	var events []string
	for _, e := range entries {
		switch e.Kind {
		case audit.KindCommand:
			_, dup := commands[e.CommandID]
			assert.False(t, dup, "command %s recorded twice", e.CommandID)
			commands[e.CommandID] = e
		case audit.KindResult:
			results[e.CommandID]++
		case audit.KindEvent:
			events = append(events, e.What)
		}
	}
	var kinds []string
	for id, c := range commands {
		kinds = append(kinds, c.What)
		assert.Equal(t, 1, results[id], "results of %s %s", c.What, id)
		require.NotNil(t, c.Caller, "caller of %s", c.What)
		if c.What == string(schemas.EndSandbox) {
			assert.False(t, c.Caller.Verified, "the harness's end_sandbox carries no caller")
			continue
		}
		assert.Equal(t, schemas.Caller{Name: "alice", User: alice.User, Role: "client", Verified: true}, *c.Caller, "caller of %s", c.What)
	}
	slices.Sort(kinds)
	assert.Equal(t, []string{"create_group", "create_sandbox", "end_group", "end_sandbox", "start_group", "start_sandbox"}, kinds)
	assert.Subset(t, events, []string{"created", "started", "ended"})

	t.Run("session pairs every action with its observation", func(t *testing.T) {
		turns := audit.Session(replayAll(t, h, audit.Filter{Sandbox: "sb-audit"}))
		var batches []audit.Turn
		for _, tu := range turns {
			assert.NotEqual(t, audit.KindObservations, tu.Entry.Kind, "observations are folded into their batch")
			if tu.Entry.Kind == audit.KindBatch {
				batches = append(batches, tu)
			}
		}
		require.Len(t, batches, 2)
		for _, b := range batches {
			require.NotNil(t, b.Answered, "batch %s answered", b.Entry.BatchID)
			require.Len(t, b.Steps, 1)
			assert.Equal(t, "terminal_tools.run", b.Steps[0].Action.Tool)
			assert.NotNil(t, b.Steps[0].Observation)
		}
		assert.Equal(t, "by-hand", batches[1].Entry.BatchID)
		assert.Contains(t, batches[1].Entry.Reply, "_INBOX.", "the second batch had a plain _INBOX reply")
	})

	t.Run("refusals name the refused user", func(t *testing.T) {
		var refusals []audit.Entry
		require.Eventually(t, func() bool {
			refusals = replayAll(t, h, audit.Filter{Kinds: []string{"refusal"}})
			return len(refusals) > 0
		}, 5*time.Second, 50*time.Millisecond)
		var r schemas.Refusal
		require.NoError(t, json.Unmarshal(refusals[0].Data, &r))
		assert.Equal(t, "publish", r.Op)
		assert.Equal(t, schemas.NoticeSubject("sb-audit"), r.Subject)
		assert.Equal(t, "unit client", r.UserName)
		assert.Equal(t, "client", r.Role)
	})

	t.Run("a time range after everything selects nothing", func(t *testing.T) {
		assert.Empty(t, replayAll(t, h, audit.Filter{Since: time.Now().Add(time.Minute)}))
	})

	t.Run("follow delivers new entries", func(t *testing.T) {
		fctx, cancel := context.WithCancel(ctx)
		defer cancel()
		got := make(chan audit.Entry, 64)
		done := make(chan error, 1)
		go func() {
			done <- audit.Replay(fctx, h.js, audit.Filter{Group: "later", Kinds: []string{"command"}}, true, func(e audit.Entry) error {
				got <- e
				return nil
			})
		}()
		cmd := h.command(schemas.CreateGroup, "later", "")
		cmd.Group = &schemas.GroupSpec{ID: "later"}
		require.Nil(t, h.send(cmd).Error)
		select {
		case e := <-got:
			assert.Equal(t, cmd.ID, e.CommandID)
		case <-time.After(5 * time.Second):
			t.Fatal("no entry followed")
		}
		cancel()
		require.NoError(t, <-done)
	})
}
