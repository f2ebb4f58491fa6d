package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/mcp"
)

// fingerprint lists every entry of the sandbox's workspace with its type,
// mode and content digest (or link target), one a line, sorted: two equal
// fingerprints are byte-exact equal workspaces.
const fingerprint = `cd /workspace && find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
  if [ -L "$p" ]; then echo "L $p -> $(readlink "$p")";
  elif [ -d "$p" ]; then echo "D $p $(stat -c %a "$p")";
  else echo "F $p $(stat -c %a "$p") $(sha256sum < "$p" | cut -c1-64)"; fi; done`

// workspaceState is the fingerprint of sb's workspace.
func workspaceState(t *testing.T, sb *sdk.Sandbox) string {
	t.Helper()
	obs := send(t, sb, fmt.Sprintf(`{"terminal_tools.run": {"args": {"command": %q, "timeout_seconds": 60}}}`, fingerprint))
	mustOK(t, obs[0])
	return obs[0].Stdout
}

// shellOK runs a shell command in sb and fails unless it exits 0.
func shellOK(t *testing.T, sb *sdk.Sandbox, command string) string {
	t.Helper()
	obs := send(t, sb, fmt.Sprintf(`{"terminal_tools.run": {"args": {"command": %q, "timeout_seconds": 60}}}`, command))
	mustOK(t, obs[0])
	require.NotNil(t, obs[0].ExitCode, "%q: %+v", command, obs[0])
	require.Zero(t, *obs[0].ExitCode, "%q: stdout %q stderr %q", command, obs[0].Stdout, obs[0].Stderr)
	return obs[0].Stdout
}

// TestCheckpoints checkpoints a real sandbox's workspace, changes and
// deletes files, compares, and rolls back byte-exact; a rollback that
// does not fit a full disk leaves the workspace as it was; a fork starts
// three sandboxes with a checkpoint's files; the checkpoints outlive their
// sandbox.
func TestCheckpoints(t *testing.T) {
	ctx := timeoutCtx(t, 10*time.Minute)
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-ckpt",
		ComputeResources: schemas.ComputeResources{Memory: "256MiB"},
	})
	sb := startSandbox(t, group, "it-ckpt-a", sdk.SandboxOptions{})
	shellOK(t, sb, `mkdir -p src/deep && head -c 300000 /dev/urandom > data.bin && printf 'hello\n' > src/a.txt &&
		printf 'keep' > keep.txt && ln -s src/a.txt link && chmod 0750 src/deep && printf 'x' > src/deep/x && chmod 0600 src/deep/x`)
	before := workspaceState(t, sb)

	base, err := sb.Checkpoint(ctx, "base")
	require.NoError(t, err)
	t.Logf("checkpoint base: %d entries, %d bytes, %d new, %.1f ms", base.Files, base.Bytes, base.NewBytes, base.DurationMS)
	assert.GreaterOrEqual(t, base.Files, 7, "entries (dirs, files, link)")
	assert.GreaterOrEqual(t, base.Bytes, int64(300000+6+4+1), "bytes")
	assert.GreaterOrEqual(t, base.NewBytes, int64(300000), "new bytes: the random file at least")

	again, err := sb.Checkpoint(ctx, "")
	require.NoError(t, err)
	assert.Zero(t, again.NewBytes, "a checkpoint of an unchanged workspace stores no content")

	t.Run("clear errors", func(t *testing.T) {
		_, err := sb.Checkpoint(ctx, "base")
		assert.ErrorIs(t, err, sdk.ErrAlreadyExists)
		_, err = sb.Checkpoint(ctx, "no spaces")
		assert.ErrorIs(t, err, sdk.ErrBadRequest)
		_, err = sb.Rollback(ctx, "nope")
		assert.ErrorIs(t, err, sdk.ErrNotFound)
		_, err = sb.DiffCheckpoints(ctx, "nope", "")
		assert.ErrorIs(t, err, sdk.ErrNotFound)
		idle, err := group.CreateSandbox(ctx, "it-ckpt-idle", sdk.SandboxOptions{})
		require.NoError(t, err)
		_, err = idle.Checkpoint(ctx, "")
		assert.ErrorIs(t, err, sdk.ErrConflict, "a sandbox created, not started")
		require.NoError(t, idle.End(ctx))
	})

	shellOK(t, sb, `printf 'changed\n' > src/a.txt && rm keep.txt && printf 'new' > new.txt`)
	changed := workspaceState(t, sb)
	require.NotEqual(t, before, changed)

	d, err := sb.DiffCheckpoints(ctx, "base", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"new.txt"}, d.Added, "added")
	assert.Equal(t, []string{"src/a.txt"}, d.Changed, "changed")
	assert.Equal(t, []string{"keep.txt"}, d.Removed, "removed")
	after, err := sb.Checkpoint(ctx, "after")
	require.NoError(t, err)
	assert.Equal(t, int64(len("changed\n")+len("new")), after.NewBytes, "new bytes: only the changed files")
	d2, err := sb.DiffCheckpoints(ctx, "base", after.ID)
	require.NoError(t, err)
	assert.Equal(t, d.Added, d2.Added)
	assert.Equal(t, d.Changed, d2.Changed)
	assert.Equal(t, d.Removed, d2.Removed)

	list, err := sb.Checkpoints(ctx)
	require.NoError(t, err)
	require.Len(t, list, 3)
	assert.Equal(t, []string{base.ID, again.ID, after.ID}, []string{list[0].ID, list[1].ID, list[2].ID}, "oldest first")
	assert.Equal(t, []string{"keep.txt", "new.txt", "src/a.txt"}, list[0].ChangedSince, "changed since base")
	assert.Empty(t, list[2].ChangedSince, "changed since the newest")

	rb, err := sb.Rollback(ctx, "base")
	require.NoError(t, err)
	assert.Equal(t, base.ID, rb.ID)
	assert.Equal(t, before, workspaceState(t, sb), "the workspace after rollback, want it byte-exact as checkpointed")
	mustOK(t, send(t, sb, `{"terminal_tools.run": {"args": {"command": "echo still answering"}}}`)[0])

	_, err = sb.Rollback(ctx, after.ID)
	require.NoError(t, err)
	assert.Equal(t, changed, workspaceState(t, sb), "rolled forward to after")

	t.Run("fork: three sandboxes start with the checkpoint's files", func(t *testing.T) {
		start := time.Now()
		forks, err := sb.Fork(ctx, "base", []string{"it-ckpt-f1", "it-ckpt-f2", "it-ckpt-f3"}, sdk.SandboxOptions{})
		for _, f := range forks {
			t.Cleanup(func() { _ = f.End(ctx) })
		}
		require.NoError(t, err)
		t.Logf("forked 3 sandboxes in %s", time.Since(start).Round(time.Millisecond))
		require.Len(t, forks, 3)
		for _, f := range forks {
			assert.Equal(t, schemas.StateRunning, f.Status().State)
			assert.Equal(t, before, workspaceState(t, f), "fork %s", f.ID())
		}
		_, err = group.CreateSandbox(ctx, "it-ckpt-f4", sdk.SandboxOptions{FromCheckpoint: &schemas.CheckpointRef{SandboxID: sb.ID(), Checkpoint: "nope"}})
		assert.ErrorIs(t, err, sdk.ErrNotFound, "a fork from an unknown checkpoint")
	})

	t.Run("checkpoints outlive their sandbox", func(t *testing.T) {
		require.NoError(t, sb.End(ctx))
		list, err := group.Attach("it-ckpt-a").Checkpoints(ctx)
		require.NoError(t, err)
		assert.Len(t, list, 3)
		for _, c := range list {
			assert.Nil(t, c.ChangedSince, "no workspace to compare with")
		}
		_, err = group.Attach("it-ckpt-never").Checkpoints(ctx)
		assert.ErrorIs(t, err, sdk.ErrNotFound)
	})
}

// TestCheckpointFullDisk fills a disk-limited sandbox's disk: a checkpoint
// still works (it writes nothing in the sandbox), a rollback that cannot
// stage its files fails with a clear error and leaves the workspace as it
// was, and succeeds once there is room.
func TestCheckpointFullDisk(t *testing.T) {
	// Its own group and disk: it runs beside the other parallel tests
	// (doc.go).
	t.Parallel()
	ctx := timeoutCtx(t, 10*time.Minute)
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-ckpt-disk",
		ComputeResources: schemas.ComputeResources{Memory: "256MiB", Disk: "32MiB"},
	})
	sb := startSandbox(t, group, "it-ckpt-disk-a", sdk.SandboxOptions{})
	shellOK(t, sb, `head -c 20M /dev/urandom > big.bin && printf 'small' > small.txt`)
	twenty := workspaceState(t, sb)
	_, err := sb.Checkpoint(ctx, "twenty")
	require.NoError(t, err)

	// Room for about half of the checkpoint: staging fails part way.
	out := shellOK(t, sb, `rm big.bin && head -c 18M /dev/urandom > fill && df -k /workspace | tail -1`)
	t.Logf("disk before the rollback: %s", strings.TrimSpace(out))
	half := workspaceState(t, sb)
	_, err = sb.Rollback(ctx, "twenty")
	require.ErrorIs(t, err, sdk.ErrResourceExhausted)
	assert.Contains(t, err.Error(), "unchanged", "the error says the workspace is unchanged")
	t.Logf("rollback without room: %v", err)
	assert.Equal(t, half, workspaceState(t, sb), "the workspace after a failed rollback (no staged files left either), want it as it was")

	// A full disk: a checkpoint still works, a rollback fails at once.
	out = shellOK(t, sb, `(head -c 64M /dev/urandom >> fill 2>&1 || true); df -k /workspace | tail -1`)
	t.Logf("disk after filling: %s", strings.TrimSpace(out))
	full := workspaceState(t, sb)
	c, err := sb.Checkpoint(ctx, "full")
	require.NoError(t, err, "a checkpoint reads the workspace from outside and writes nothing in it")
	assert.GreaterOrEqual(t, c.Bytes, int64(28<<20), "the full workspace's bytes")
	_, err = sb.Rollback(ctx, "twenty")
	require.ErrorIs(t, err, sdk.ErrResourceExhausted)
	assert.Equal(t, full, workspaceState(t, sb), "the workspace after a failed rollback, want it as it was")

	shellOK(t, sb, `rm fill`)
	_, err = sb.Rollback(ctx, "twenty")
	require.NoError(t, err)
	assert.Equal(t, twenty, workspaceState(t, sb), "the workspace after rollback with room")
}

// TestAutoCheckpoints runs a group with automatic checkpoints: the
// executor says which batches changed the workspace, the orchestrator
// checkpoints after each of those only, and keeps the newest Keep.
func TestAutoCheckpoints(t *testing.T) {
	ctx := timeoutCtx(t, 5*time.Minute)
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-ckpt-auto",
		ComputeResources: schemas.ComputeResources{Memory: "256MiB"},
		Checkpoints:      &schemas.CheckpointPolicy{Auto: true, Keep: 2},
	})
	sb := startSandbox(t, group, "it-ckpt-auto-a", sdk.SandboxOptions{})
	// Checkpoints outlive their sandbox: those of an earlier run of this
	// test against the same system (-count) are not this run's.
	since := time.Now().Add(-time.Second)
	results, err := env.nc.SubscribeSync(schemas.ObservationSubject(sb.ID(), "*"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = results.Unsubscribe() })
	// batch runs command and returns whether the executor said it changed
	// the workspace.
	batch := func(command string) bool {
		t.Helper()
		shellOK(t, sb, command)
		m, err := results.NextMsg(30 * time.Second)
		require.NoError(t, err)
		var res schemas.BatchResult
		require.NoError(t, json.Unmarshal(m.Data, &res))
		t.Logf("%q: workspace_changed %v", command, res.WorkspaceChanged)
		return res.WorkspaceChanged
	}
	// autos waits until the sandbox has n automatic checkpoints, the newest
	// of them the workspace now, and returns them.
	autos := func(n int) []schemas.Checkpoint {
		t.Helper()
		var got []schemas.Checkpoint
		poll.Until(t, 60*time.Second, fmt.Sprintf("%d automatic checkpoints, the newest up to date", n), func() bool {
			list, err := sb.Checkpoints(ctx)
			if err != nil {
				return false
			}
			got = got[:0]
			for _, c := range list {
				if c.Auto && c.CreatedAt.After(since) {
					got = append(got, c)
				}
			}
			return len(got) == n && len(got[n-1].ChangedSince) == 0
		})
		return got
	}

	assert.True(t, batch(`printf one > one.txt`), "a batch that writes a file")
	first := autos(1)[0]
	assert.False(t, batch(`cat one.txt && ls -la`), "a batch that only reads")
	assert.True(t, batch(`printf two > two.txt`))
	second := autos(2)
	assert.Equal(t, first.ID, second[0].ID, "the read-only batch made no checkpoint")
	assert.True(t, batch(`rm one.txt`), "a batch that deletes a file")
	third := autos(2)
	assert.Equal(t, second[1].ID, third[0].ID, "keep 2: the oldest automatic checkpoint is deleted")
	named, err := sb.Checkpoint(ctx, fmt.Sprintf("mine-%d", since.UnixNano()))
	require.NoError(t, err)
	assert.False(t, named.Auto)

	_, err = sb.Rollback(ctx, third[0].ID)
	require.NoError(t, err)
	out := shellOK(t, sb, `ls`)
	assert.Contains(t, out, "one.txt", "rolled back to the checkpoint after two.txt, before one.txt was removed")
	assert.Contains(t, out, "two.txt")
}

// TestMCPCheckpointTools drives the checkpoint, fork, pause and resume
// tools of the MCP server (sandox mcp --checkpoints --pause) with a real
// MCP client on a container sandbox.
func TestMCPCheckpointTools(t *testing.T) {
	g := newGroup(t, sdk.GroupConfig{ID: "it-ckpt-mcp", ComputeResources: schemas.ComputeResources{Memory: "256MiB"}})
	sb := startSandbox(t, g, "it-ckpt-mcp-a", sdk.SandboxOptions{})
	srv, err := mcp.NewServer(t.Context(), sb, mcp.Options{Checkpoints: true, Pause: true})
	require.NoError(t, err)
	st, ct := sdkmcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "it-client", Version: "v0"}, nil).Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	call := func(name string, args map[string]any) *sdkmcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		return res
	}

	shellOK(t, sb, `printf one > notes.txt`)
	res := call(mcp.ToolCheckpoint, map[string]any{"name": "first"})
	require.False(t, res.IsError, mcpText(t, res))
	assert.Contains(t, mcpText(t, res), "(first)")
	shellOK(t, sb, `printf two > notes.txt && printf new > new.txt`)
	res = call(mcp.ToolDiffCheckpoints, map[string]any{"from": "first"})
	require.False(t, res.IsError, mcpText(t, res))
	assert.Equal(t, "added: new.txt\nchanged: notes.txt\nremoved: none", mcpText(t, res))
	res = call(mcp.ToolListCheckpoints, map[string]any{})
	require.False(t, res.IsError, mcpText(t, res))
	assert.Contains(t, mcpText(t, res), "changed since: new.txt, notes.txt")
	res = call(mcp.ToolRollback, map[string]any{"checkpoint": "first"})
	require.False(t, res.IsError, mcpText(t, res))
	assert.Equal(t, "one", shellOK(t, sb, `cat notes.txt; ls new.txt 2>/dev/null || true`))
	res = call(mcp.ToolRollback, map[string]any{"checkpoint": "nope"})
	assert.True(t, res.IsError, "a rollback to an unknown checkpoint is a failed call")
	assert.Contains(t, mcpText(t, res), "no checkpoint")

	// Two forks from "first" run with its files; the group's end (the
	// cleanup) ends them.
	ids := []string{"it-ckpt-mcp-f1", "it-ckpt-mcp-f2"}
	res = call(mcp.ToolFork, map[string]any{"checkpoint": "first", "ids": ids})
	require.False(t, res.IsError, mcpText(t, res))
	var forked mcp.ForkResult
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &forked))
	assert.Equal(t, ids, forked.IDs)
	for _, id := range forked.IDs {
		assert.Equal(t, "one", shellOK(t, g.Attach(id), `cat notes.txt`), "fork %s", id)
	}
	res = call(mcp.ToolFork, map[string]any{"checkpoint": "nope", "count": 1})
	assert.True(t, res.IsError, "a fork from an unknown checkpoint is a failed call")

	// Paused, the sandbox's own tools fail with the paused error until
	// sandox_resume; its files are kept.
	res = call(mcp.ToolPause, map[string]any{})
	require.False(t, res.IsError, mcpText(t, res))
	res = call(sdk.ModelToolName("terminal_tools.run"), map[string]any{"command": "cat notes.txt"})
	assert.True(t, res.IsError, "a call to a paused sandbox: %s", mcpText(t, res))
	assert.Contains(t, mcpText(t, res), "paused")
	res = call(mcp.ToolResume, map[string]any{})
	require.False(t, res.IsError, mcpText(t, res))
	res = call(mcp.ToolResume, map[string]any{})
	assert.True(t, res.IsError, "resuming a running sandbox is a conflict")
	assert.Equal(t, "one", shellOK(t, sb, `cat notes.txt`))
}
