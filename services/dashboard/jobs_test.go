package dashboard

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestSandboxJobs records in SANDOX_JOBS, as executors do, a job still
// running, a job that exited 3, one a signal killed (with output between
// its start and exit), and a job of another sandbox, and checks the
// sandbox's page: its three jobs in the order they started, with state
// and exit, and not the other sandbox's.
func TestSandboxJobs(t *testing.T) {
	s := startSandboxPage(t, "No jobs.")
	ctx := t.Context()
	_, err := s.js.CreateStream(ctx, jetstream.StreamConfig{Name: schemas.JobStream, Subjects: []string{schemas.JobStreamSubjects}, Storage: jetstream.MemoryStorage})
	require.NoError(t, err)
	publish := func(sandbox, job, kind string, v any) {
		t.Helper()
		data, err := json.Marshal(v)
		require.NoError(t, err)
		_, err = s.js.Publish(ctx, schemas.JobSubject(sandbox, job, kind), data)
		require.NoError(t, err)
	}
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	started := func(sandbox, job, command string) {
		publish(sandbox, job, schemas.JobStartKind, schemas.JobInfo{JobID: job, SandboxID: sandbox, Command: command, StartedAt: start, Running: true})
	}
	started("sb-1", "serve", "python3 -m http.server 8000")
	started("sb-1", "build", "make all")
	started("sb-1", "loop", "while true; do sleep 1; done")
	started("sb-2", "other", "echo not mine")
	publish("sb-1", "loop", schemas.JobOutputKind, schemas.JobOutput{JobID: "loop", Stream: schemas.JobStdout, Data: []byte("tick\n")})
	publish("sb-1", "build", schemas.JobExitKind, schemas.JobExit{JobID: "build", SandboxID: "sb-1", ExitCode: 3, StartedAt: start, EndedAt: start.Add(time.Minute)})
	publish("sb-1", "loop", schemas.JobExitKind, schemas.JobExit{JobID: "loop", SandboxID: "sb-1", ExitCode: 137, Signal: "SIGKILL", StartedAt: start, EndedAt: start.Add(time.Minute)})

	s.checkRows(t, "job", []pageRow{ // in the order they started
		{"serve", []string{"python3 -m http.server 8000", "running"}},
		{"build", []string{"make all", "exited", `<td class="exit">3</td>`}},
		{"loop", []string{"exited", `<td class="exit">137 (SIGKILL)</td>`}},
	})
}
