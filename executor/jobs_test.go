package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
)

// jobMessages reads every message of job in sandbox from the job stream,
// in order, until the exit.
func jobMessages(t *testing.T, js jetstream.JetStream, sandbox, job string) []jetstream.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := js.OrderedConsumer(ctx, schemas.JobStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{schemas.JobSubjects(sandbox, job)},
	})
	require.NoError(t, err)
	var out []jetstream.Msg
	for {
		m, err := c.Next(jetstream.FetchContext(ctx))
		require.NoError(t, err, "after %d messages", len(out))
		out = append(out, m)
		if m.Subject() == schemas.JobSubject(sandbox, job, schemas.JobExitKind) {
			return out
		}
	}
}

// TestJobOutputSurvivesABusRestart runs a job in a real executor (the
// terminal family over its real NATS connection) and restarts the NATS
// server while the job prints: the job stream still holds every line once,
// in order, followed by the exit.
func TestJobOutputSurvivesABusRestart(t *testing.T) {
	b := startBusExecutor(t, "terminal_tools", schemas.JobStream, schemas.JobStreamSubjects)

	const lines = 60
	obs := b.run(t, fmt.Sprintf(`{"terminal_tools.start_job": {"args": {"job_id": "j1", "command": "for i in $(seq 1 %d); do echo line $i; sleep 0.05; done; echo done >&2; exit 4"}}}`, lines))
	var info schemas.JobInfo
	require.NoError(t, json.Unmarshal(obs.Return, &info))
	assert.Equal(t, "j1", info.JobID)
	assert.Equal(t, "sb-1", info.SandboxID)

	// The job has printed part of its output, not all, when the bus goes.
	b.streamHolds(t, schemas.JobStream, 5, "the first lines in the job stream")
	natstest.Restart(t, b.NS, natstest.StoreDir(b.Store))

	var stdout, stderr strings.Builder
	var exit schemas.JobExit
	msgs := jobMessages(t, b.JS, "sb-1", "j1")
	require.Equal(t, schemas.JobSubject("sb-1", "j1", schemas.JobStartKind), msgs[0].Subject(), "the start comes first")
	for _, m := range msgs[1 : len(msgs)-1] {
		require.Equal(t, schemas.JobSubject("sb-1", "j1", schemas.JobOutputKind), m.Subject())
		var out schemas.JobOutput
		require.NoError(t, json.Unmarshal(m.Data(), &out))
		b := &stdout
		if out.Stream == schemas.JobStderr {
			b = &stderr
		}
		require.Equal(t, int64(b.Len()), out.Offset, "chunk of %s at offset %d: a byte lost or repeated", out.Stream, out.Offset)
		b.Write(out.Data)
	}
	require.NoError(t, json.Unmarshal(msgs[len(msgs)-1].Data(), &exit))
	var want strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	assert.Equal(t, want.String(), stdout.String())
	assert.Equal(t, "done\n", stderr.String())
	assert.Equal(t, 4, exit.ExitCode)
	assert.Equal(t, int64(stdout.Len()), exit.StdoutBytes)
}
