package dashboard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/checkpoints"
)

// TestSandboxCheckpoints records in the checkpoint store's index, as the
// orchestrator does, an automatic and an asked-for checkpoint of a sandbox
// (recorded newest first) and one of another sandbox, and checks the
// sandbox's page: its two checkpoints oldest first, with name, how they
// were taken, files and bytes, and not the other sandbox's.
func TestSandboxCheckpoints(t *testing.T) {
	s := startSandboxPage(t, "No checkpoints.")
	_, err := checkpoints.OpenStore(t.Context(), s.js, checkpoints.StoreConfig{})
	require.NoError(t, err)
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	record := func(c schemas.Checkpoint) {
		t.Helper()
		s.put(t, schemas.CheckpointIndexBucket, c.SandboxID+"."+c.ID, c)
	}
	record(schemas.Checkpoint{ID: "ck-2", Name: "before-refactor", SandboxID: "sb-1", GroupID: "research", CreatedAt: at.Add(time.Minute), Files: 12, Bytes: 3 << 20, NewBytes: 1024})
	record(schemas.Checkpoint{ID: "ck-1", SandboxID: "sb-1", GroupID: "research", CreatedAt: at, Auto: true, Files: 7, Bytes: 2048, NewBytes: 2048})
	record(schemas.Checkpoint{ID: "ck-9", SandboxID: "sb-2", GroupID: "research", CreatedAt: at, Files: 1, Bytes: 1})

	s.checkRows(t, "checkpoint", []pageRow{ // oldest first
		{"ck-1", []string{`<td class="taken">automatic</td>`, `<td class="files">7</td>`, `<td class="bytes">2.0 KiB</td>`}},
		{"ck-2", []string{`<td class="name">before-refactor</td>`, `<td class="taken">asked</td>`, `<td class="files">12</td>`, `<td class="bytes">3.0 MiB</td>`}},
	})
}
