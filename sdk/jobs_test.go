package sdk_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/executor/executortest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// attachJobs starts a real executor in-process and returns an SDK handle
// on its sandbox.
func attachJobs(t *testing.T) *sdk.Sandbox {
	t.Helper()
	sb := executortest.Start(t, "sb-jobs", nil)
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "g-jobs"}, sdk.WithConn(sb.Conn))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	return g.Attach(sb.ID)
}

func TestJobOutputResumesFromASequence(t *testing.T) {
	sb := attachJobs(t)
	const lines = 30
	job, info, err := sb.StartJob(t.Context(), fmt.Sprintf("for i in $(seq 1 %d); do echo out $i; echo err $i >&2; sleep 0.02; done; exit 6", lines), sdk.JobOptions{ID: "j"})
	require.NoError(t, err)
	assert.Equal(t, "j", job.ID())
	assert.Equal(t, "sb-jobs", info.SandboxID)

	var stdout, stderr strings.Builder
	var last uint64
	collect := func(ev sdk.JobEvent) {
		require.Greater(t, ev.Seq, last)
		last = ev.Seq
		if ev.Output == nil {
			return
		}
		b := &stdout
		if ev.Output.Stream == schemas.JobStderr {
			b = &stderr
		}
		require.Equal(t, int64(b.Len()), ev.Output.Offset, "a byte lost or repeated")
		b.Write(ev.Output.Data)
	}
	for ev, err := range job.Output(t.Context(), 0) {
		require.NoError(t, err)
		collect(ev)
		if strings.Count(stdout.String(), "\n") >= 5 {
			break // as a client that lost its connection
		}
	}
	var exit *schemas.JobExit
	for ev, err := range sb.Job("j").Output(t.Context(), last) {
		require.NoError(t, err)
		collect(ev)
		exit = ev.Exit
	}
	var want, wantErr strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&want, "out %d\n", i)
		fmt.Fprintf(&wantErr, "err %d\n", i)
	}
	assert.Equal(t, want.String(), stdout.String())
	assert.Equal(t, wantErr.String(), stderr.String())
	require.NotNil(t, exit, "the last event is the exit")
	assert.Equal(t, 6, exit.ExitCode)

	got, err := job.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, *exit, got, "Wait reads the same exit")
}

// TestJobWaitEndsWhenTheSandboxGoes: an event that loses batches (here
// published as the orchestrator would after a restart) ends a Wait on a
// job that will never write its exit.
func TestJobWaitEndsWhenTheSandboxGoes(t *testing.T) {
	sb := executortest.Start(t, "sb-lost", nil)
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "g-jobs"}, sdk.WithConn(sb.Conn))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	job, _, err := g.Attach(sb.ID).StartJob(t.Context(), "sleep 300", sdk.JobOptions{ID: "lost"})
	require.NoError(t, err)

	waited := make(chan error, 1)
	go func() {
		_, err := job.Wait(t.Context())
		waited <- err
	}()
	data, err := json.Marshal(schemas.Event{Kind: schemas.EventRestarted, SandboxID: sb.ID, Time: time.Now()})
	require.NoError(t, err)
	// Until the Wait's subscription is in place, an event goes unseen:
	// publish until it answers.
	require.Eventually(t, func() bool {
		require.NoError(t, sb.Conn.Publish(schemas.SandboxEventSubject(sb.ID), data))
		select {
		case err := <-waited:
			assert.ErrorIs(t, err, sdk.ErrSandboxGone)
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	}, time.Minute, time.Millisecond)
}

func TestJobControl(t *testing.T) {
	sb := attachJobs(t)
	job, _, err := sb.StartJob(t.Context(), "sleep 300 & sleep 301", sdk.JobOptions{ID: "long"})
	require.NoError(t, err)
	_, _, err = sb.StartJob(t.Context(), "true", sdk.JobOptions{ID: "long"})
	assert.ErrorIs(t, err, sdk.ErrAlreadyExists)
	_, _, err = sb.StartJob(t.Context(), "true", sdk.JobOptions{ID: "no spaces"})
	assert.ErrorIs(t, err, sdk.ErrBadRequest)

	jobs, err := sb.Jobs(t.Context())
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.True(t, jobs[0].Running)

	assert.ErrorIs(t, job.Signal(t.Context(), "BOGUS"), sdk.ErrBadRequest)
	require.NoError(t, job.Signal(t.Context(), "STOP"))
	require.NoError(t, job.Signal(t.Context(), "CONT"))
	info, err := job.Kill(t.Context())
	require.NoError(t, err)
	require.NotNil(t, info.Exit)
	assert.Equal(t, "SIGKILL", info.Exit.Signal)
	exit, err := job.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 137, exit.ExitCode)

	_, err = sb.Job("never").Wait(t.Context())
	assert.ErrorIs(t, err, sdk.ErrNotFound)
	for _, err := range sb.Job("never").Output(t.Context(), 0) {
		assert.ErrorIs(t, err, sdk.ErrNotFound)
	}
	assert.ErrorIs(t, sb.Job("never").Signal(t.Context(), "TERM"), sdk.ErrNotFound)
	_, err = sb.Job("never").Kill(t.Context())
	assert.ErrorIs(t, err, sdk.ErrNotFound)
}
