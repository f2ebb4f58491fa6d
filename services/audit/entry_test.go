package audit

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
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
