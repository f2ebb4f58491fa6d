package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
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
	store := t.TempDir()
	ns := natstest.Start(t, natstest.StoreDir(store))
	url := ns.ClientURL()
	js := func(nc *nats.Conn) jetstream.JetStream {
		j, err := jetstream.New(nc)
		require.NoError(t, err)
		return j
	}
	admin, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(admin.Close)
	_, err = js(admin).CreateStream(t.Context(), jetstream.StreamConfig{
		Name: schemas.JobStream, Subjects: []string{schemas.JobStreamSubjects},
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
	})
	require.NoError(t, err)

	// The executor's connection, as sandox-executor makes it.
	exec, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.CustomInboxPrefix(schemas.SandboxInboxPrefix("sb-1")))
	require.NoError(t, err)
	t.Cleanup(exec.Close)
	ws := t.TempDir()
	reg, closeTools, err := Tools(t.Context(), tools.Env{
		Executor:  schemas.ExecutorEnv{SandboxID: "sb-1", Workspace: ws, Families: []string{"terminal_tools"}},
		Publish:   Publisher(func() *nats.Conn { return exec }),
		SandboxID: func() string { return "sb-1" },
		Log:       slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(closeTools)
	serve(t, exec, reg, Config{SandboxID: "sb-1"})
	poll.Until(t, 5*time.Second, "the executor to answer pings", func() bool {
		_, err := admin.Request(schemas.PingSubject("sb-1"), nil, 200*time.Millisecond)
		return err == nil
	})

	const lines = 60
	res := request(t, admin, fmt.Sprintf(`{"terminal_tools.start_job": {"args": {"job_id": "j1", "command": "for i in $(seq 1 %d); do echo line $i; sleep 0.05; done; echo done >&2; exit 4"}}}`, lines), false)
	require.Len(t, res.Observations, 1)
	require.Nil(t, res.Observations[0].Error, "%+v", res.Observations[0])
	var info schemas.JobInfo
	require.NoError(t, json.Unmarshal(res.Observations[0].Return, &info))
	assert.Equal(t, "j1", info.JobID)
	assert.Equal(t, "sb-1", info.SandboxID)

	// The job has printed part of its output, not all, when the bus goes.
	poll.Until(t, 30*time.Second, "the first lines in the job stream", func() bool {
		st, err := js(admin).Stream(t.Context(), schemas.JobStream)
		return err == nil && st.CachedInfo().State.Msgs >= 5
	})
	natstest.Restart(t, ns, natstest.StoreDir(store))

	var stdout, stderr strings.Builder
	var exit schemas.JobExit
	msgs := jobMessages(t, js(admin), "sb-1", "j1")
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
