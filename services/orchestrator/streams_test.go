package orchestrator

import (
	"os/exec"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
)

const noExecutorBatch = `{"terminal_tools.run": {"description": "by hand", "args": {"command": "echo hello"}}}`

// TestActionsWithoutExecutorHaveNoResponders checks, with the streams set
// up as every worker sets them up, that a batch sent to a sandbox that no
// executor serves is answered at once by the server with "no responders":
// the events stream must not capture the actions subject.
func TestActionsWithoutExecutorHaveNoResponders(t *testing.T) {
	_, nc := testWorker(t)
	start := time.Now()
	_, err := nc.Request(schemas.ActionsSubject("nobody"), []byte(noExecutorBatch), 5*time.Second)
	require.ErrorIs(t, err, nats.ErrNoResponders)
	assert.Less(t, time.Since(start), time.Second, "no responders must come at once, not after a timeout")

	t.Run("the NATS CLI reports it", func(t *testing.T) {
		natsCLI := natstest.CLI(t)
		start := time.Now()
		out, err := exec.CommandContext(t.Context(), natsCLI, "--server", nc.ConnectedUrl(), "request", "--timeout", "5s",
			schemas.ActionsSubject("nobody"), noExecutorBatch).CombinedOutput()
		// natscli v0.5.1 says so and still exits 0.
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "No responders are available")
		assert.Less(t, time.Since(start), 4*time.Second, "no responders must come before the 5 s timeout")
	})
}
