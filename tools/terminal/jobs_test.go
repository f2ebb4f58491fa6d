package terminal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// jobInfo decodes the JobInfo a job tool returned.
func jobInfo(t *testing.T, res tools.Result) schemas.JobInfo {
	t.Helper()
	var info schemas.JobInfo
	require.NoError(t, json.Unmarshal(res.Return, &info), "return %s", res.Return)
	return info
}

func TestJobRunsAndReportsItsExit(t *testing.T) {
	m := newTestManager(t, Config{})
	res := mustCall(t, m, "start_job", map[string]any{"command": "for i in 1 2 3; do echo out $i; echo err $i >&2; done; exit 7", "job_id": "j1"})
	info := jobInfo(t, res)
	assert.Equal(t, "j1", info.JobID)
	assert.True(t, info.Running || info.Exit != nil)

	res = mustCall(t, m, "wait_job", map[string]any{"job_id": "j1", "timeout_seconds": waitLong.Seconds()})
	requireExit(t, res, 7)
	info = jobInfo(t, res)
	require.NotNil(t, info.Exit)
	assert.Equal(t, int64(len("out 1\nout 2\nout 3\n")), info.Exit.StdoutBytes)

	res = mustCall(t, m, "job_output", map[string]any{"job_id": "j1"})
	assert.Equal(t, "out 1\nout 2\nout 3\n", res.Stdout)
	assert.Equal(t, "err 1\nerr 2\nerr 3\n", res.Stderr)
	res = mustCall(t, m, "job_output", map[string]any{"job_id": "j1", "stdout_offset": 6, "stderr_offset": 12})
	assert.Equal(t, "out 2\nout 3\n", res.Stdout)
	assert.Equal(t, "err 3\n", res.Stderr)

	_, err := call(t, m, "start_job", map[string]any{"command": "true", "job_id": "j1"})
	assert.ErrorIs(t, err, schemas.CodeInvalidArgs, "an id in use")
	_, err = call(t, m, "wait_job", map[string]any{"job_id": "nope"})
	assert.ErrorIs(t, err, tools.ErrNotFound)

	res = mustCall(t, m, "list_jobs", map[string]any{})
	var infos []schemas.JobInfo
	require.NoError(t, json.Unmarshal(res.Return, &infos))
	require.Len(t, infos, 1)
	assert.False(t, infos[0].Running)
}

// TestKillJobKillsTheTree starts a job whose children leave its process
// group (setsid) and background themselves; kill_job leaves none alive.
func TestKillJobKillsTheTree(t *testing.T) {
	m := newTestManager(t, Config{})
	pids := filepath.Join(t.TempDir(), "pids")
	cmd := "sleep 300 & echo $! >> " + pids + "; setsid sleep 301 & echo $! >> " + pids +
		"; (bash -c 'sleep 302 & echo $! >> " + pids + "; wait') & sleep 303"
	mustCall(t, m, "start_job", map[string]any{"command": cmd, "job_id": "tree"})
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(pids)
		return strings.Count(string(data), "\n") == 3
	}, waitLong, 20*time.Millisecond)
	data, err := os.ReadFile(pids)
	require.NoError(t, err)

	res := mustCall(t, m, "kill_job", map[string]any{"job_id": "tree"})
	info := jobInfo(t, res)
	require.NotNil(t, info.Exit, "the job ended")
	assert.Equal(t, "SIGKILL", info.Exit.Signal)
	requireExit(t, res, 128+int(syscall.SIGKILL))
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		assert.Eventually(t, func() bool { _, _, alive := procStat(pid); return !alive },
			10*time.Second, 20*time.Millisecond, "process %d of the job survived", pid)
	}
}

func TestSignalJob(t *testing.T) {
	m := newTestManager(t, Config{})
	mustCall(t, m, "start_job", map[string]any{"command": "trap 'echo got term; exit 3' TERM; echo ready; while :; do sleep 0.1; done", "job_id": "sig"})
	_, err := call(t, m, "signal_job", map[string]any{"job_id": "sig", "signal": "BOGUS"})
	assert.ErrorIs(t, err, schemas.CodeInvalidArgs)
	require.Eventually(t, func() bool {
		return mustCall(t, m, "job_output", map[string]any{"job_id": "sig"}).Stdout == "ready\n"
	}, waitLong, 10*time.Millisecond, "the trap is set")
	mustCall(t, m, "signal_job", map[string]any{"job_id": "sig", "signal": "SIGTERM"})
	mustCall(t, m, "wait_job", map[string]any{"job_id": "sig", "timeout_seconds": waitLong.Seconds()})
	res := mustCall(t, m, "job_output", map[string]any{"job_id": "sig"})
	assert.Equal(t, "ready\ngot term\n", res.Stdout)
	requireExit(t, res, 3)
}

func TestStreamTailKeepsTheEnd(t *testing.T) {
	var tail streamTail
	chunk := strings.Repeat("x", jobChunk)
	for range 3 * jobKeep / jobChunk {
		tail.add([]byte(chunk))
	}
	tail.add([]byte("end"))
	total := int64(3*jobKeep + 3)
	assert.Equal(t, total, tail.total)
	got, from := tail.since(0)
	assert.GreaterOrEqual(t, len(got), jobKeep, "at least the last MiB kept")
	assert.Equal(t, total-int64(len(got)), from, "what was dropped is skipped, and said so")
	got, from = tail.since(total - 3)
	assert.Equal(t, "end", string(got))
	assert.Equal(t, total-3, from)
	got, _ = tail.since(total + 10)
	assert.Empty(t, got)
}
