package terminal

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools/outbox"
)

// TestJobStopsPublishingAtTheStreamBudget: a job that prints without end
// publishes output until the sandbox's budget is spent, then one
// truncated record, then its exit; the job itself runs on to its end.
func TestJobStopsPublishingAtTheStreamBudget(t *testing.T) {
	var mu sync.Mutex
	var kinds []string
	var published int
	publish := func(_ context.Context, subject, _ string, data []byte) error {
		mu.Lock()
		defer mu.Unlock()
		kind := subject[strings.LastIndexByte(subject, '.')+1:]
		kinds = append(kinds, kind)
		if kind == schemas.JobOutputKind {
			var out schemas.JobOutput
			if err := json.Unmarshal(data, &out); err != nil {
				return err
			}
			published += len(out.Data)
		}
		return nil
	}
	const budget = 64 << 10
	m := newTestManager(t, Config{Jobs: JobConfig{Publish: publish, SandboxID: func() string { return "sb" }, Budget: outbox.NewBudget(budget)}})
	mustCall(t, m, "start_job", map[string]any{"command": "head -c 1000000 /dev/zero | tr '\\0' x; echo done >&2", "job_id": "loud"})
	res := mustCall(t, m, "wait_job", map[string]any{"job_id": "loud", "timeout_seconds": waitLong.Seconds()})
	requireExit(t, res, 0)
	info := jobInfo(t, res)
	assert.Equal(t, int64(1000000), info.Exit.StdoutBytes, "the job ran to its end")

	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(kinds), 3)
	assert.Equal(t, schemas.JobStartKind, kinds[0])
	assert.Equal(t, schemas.JobExitKind, kinds[len(kinds)-1], "the exit comes last")
	assert.Equal(t, schemas.JobTruncatedKind, kinds[len(kinds)-2], "one truncated record before the exit")
	assert.Equal(t, 1, strings.Count(strings.Join(kinds, " "), schemas.JobTruncatedKind))
	assert.LessOrEqual(t, published, budget, "no more output than the budget")
	assert.Positive(t, published)
}

// TestJobWebhookOnlyWhereAllowed: start_job refuses a webhook the
// operator's allowlist does not permit, and records one it does.
func TestJobWebhookOnlyWhereAllowed(t *testing.T) {
	m := newTestManager(t, Config{Jobs: JobConfig{Webhooks: []string{"https://hooks.example.com/ci/"}}})
	_, err := call(t, m, "start_job", map[string]any{"command": "true", "webhook": "https://elsewhere.example.com/x"})
	require.ErrorIs(t, err, schemas.CodeAccessDenied)
	_, err = call(t, m, "start_job", map[string]any{"command": "true", "webhook": "ftp://hooks.example.com/ci/x"})
	require.ErrorIs(t, err, schemas.CodeBadRequest)
	res := mustCall(t, m, "start_job", map[string]any{"command": "true", "webhook": "https://hooks.example.com/ci/done", "job_id": "hooked"})
	assert.Equal(t, "https://hooks.example.com/ci/done", jobInfo(t, res).Webhook)

	m = newTestManager(t, Config{})
	_, err = call(t, m, "start_job", map[string]any{"command": "true", "webhook": "https://hooks.example.com/ci/done"})
	require.ErrorIs(t, err, schemas.CodeAccessDenied, "no allowlist refuses every webhook")
}
