package audit

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
)

// TestParseShowsACommandOnce reads the log of a command whose worker died
// with it in hand: recorded twice (deliveries 1 and 2) and answered twice
// (the redelivery found the result and published it again). The replay
// shows one record and one result; another command is not affected.
func TestParseShowsACommandOnce(t *testing.T) {
	record := func(id string, delivery uint64) []byte {
		data, err := json.Marshal(schemas.CommandRecord{
			Command:  schemas.Command{ID: id, Kind: schemas.CreateSandbox, GroupID: "g", SandboxID: "s-" + id},
			Worker:   "w",
			Delivery: delivery,
		})
		require.NoError(t, err)
		return data
	}
	result := func(id string) []byte {
		data, err := json.Marshal(schemas.CommandResult{CommandID: id, Kind: schemas.CreateSandbox})
		require.NoError(t, err)
		return data
	}
	log := []struct {
		name    string
		subject string
		data    []byte
		shown   bool
	}{
		{name: "first record", subject: schemas.CommandRecordSubject("c1"), data: record("c1", 1), shown: true},
		{name: "record of the redelivery", subject: schemas.CommandRecordSubject("c1"), data: record("c1", 2)},
		{name: "another command", subject: schemas.CommandRecordSubject("c2"), data: record("c2", 1), shown: true},
		{name: "first result", subject: schemas.ResultSubject("c1"), data: result("c1"), shown: true},
		{name: "result published again", subject: schemas.ResultSubject("c1"), data: result("c1")},
		{name: "the other's result", subject: schemas.ResultSubject("c2"), data: result("c2"), shown: true},
	}
	ix := newIndex()
	for i, m := range log {
		t.Run(m.name, func(t *testing.T) {
			e, ok := ix.parse(uint64(i+1), time.Now(), m.subject, nil, m.data)
			assert.Equal(t, m.shown, ok)
			if ok {
				assert.Equal(t, "g", e.GroupID)
			}
		})
	}
}

// TestBatchCaller checks that a batch record names who sent the batch:
// verified when the user key signed this batch id and these actions and
// the account issued the user, not when the actions were changed after.
func TestBatchCaller(t *testing.T) {
	authority, err := auth.NewAuthority()
	require.NoError(t, err)
	creds, err := authority.Mint("alice", auth.RoleClient, "")
	require.NoError(t, err)
	kp, err := nkeys.FromSeed(creds.Seed)
	require.NoError(t, err)
	payload := []byte(`{"filesystem_tools.stat_path":{"path":"."}}`)
	sig, err := kp.Sign(schemas.SignedBatch("b1", payload))
	require.NoError(t, err)
	hdr := map[string][]string{
		schemas.HeaderBatchID:   {"b1"},
		schemas.HeaderCallerJWT: {creds.JWT},
		schemas.HeaderCallerSig: {base64.RawURLEncoding.EncodeToString(sig)},
	}
	tests := []struct {
		name     string
		data     []byte
		hdr      map[string][]string
		verified bool
		note     string
	}{
		{name: "signed", data: payload, hdr: hdr, verified: true},
		{name: "actions changed after signing", data: []byte(`{"terminal_tools.run":{"command":"id"}}`), hdr: hdr, note: "signature does not match"},
		{name: "no caller", data: payload, hdr: map[string][]string{schemas.HeaderBatchID: {"b1"}}, note: "carries no caller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := newIndex()
			ix.account = authority.AccountKey()
			e, ok := ix.parse(1, time.Now(), schemas.BatchRecordSubject("sb1"), tt.hdr, tt.data)
			require.True(t, ok)
			require.NotNil(t, e.Caller)
			assert.Equal(t, tt.verified, e.Caller.Verified, e.Caller.Note)
			assert.Contains(t, e.Caller.Note, tt.note)
			if tt.verified {
				assert.Equal(t, "alice", e.Caller.Name)
				assert.Equal(t, "client", e.Caller.Role)
			}
		})
	}
}

// TestParseProgress reads a progress record: its kind, phase, group and
// sandbox, and the line the timeline shows.
func TestParseProgress(t *testing.T) {
	p := schemas.Progress{GroupID: "g", SandboxID: "sb", Phase: schemas.PhaseImageBuild, Done: 1, Total: 3, Message: "Step 2/3 : RUN apt-get install -y chromium"}
	data, err := json.Marshal(p)
	require.NoError(t, err)
	e, ok := newIndex().parse(7, time.Now(), schemas.ProgressSubject("g"), nil, data)
	require.True(t, ok)
	assert.Equal(t, KindProgress, e.Kind)
	assert.Equal(t, schemas.PhaseImageBuild, e.What)
	assert.Equal(t, "g", e.GroupID)
	assert.Equal(t, "sb", e.SandboxID)
	assert.Equal(t, "group=g sandbox=sb 1/3 Step 2/3 : RUN apt-get install -y chromium", describe(e))

	p.Finished, p.Error, p.Message = true, "exit 100", "failed"
	assert.Equal(t, "1/3 failed: exit 100", ProgressText(p))
}
