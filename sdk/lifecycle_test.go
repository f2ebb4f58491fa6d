package sdk_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// TestGroupLifecycle walks the seed's flow through the real orchestrator
// and real executors: a group with an initial sandbox, a sandbox created at
// run time, synchronous batches, status and stats requests, and the end.
func TestGroupLifecycle(t *testing.T) {
	s := startSandox(t)
	ctx := t.Context()
	g := s.newGroup(t, sdk.GroupConfig{
		ID:               "life",
		ComputeResources: schemas.ComputeResources{CPU: "0.5", Memory: "256MiB"},
		Sandboxes:        []sdk.InitialSandbox{{ID: "life-a"}},
	})
	assert.Equal(t, "life", g.ID())
	require.NoError(t, g.Start(ctx))
	a := g.Sandbox("life-a")
	require.NotNil(t, a)
	assert.Equal(t, "life-a", a.ID())
	assert.Equal(t, schemas.StateRunning, a.Status().State)

	obs, err := a.SendActionsJSON(ctx, []byte(`{
		"filesystem_tools.write_file": {"description": "take a note", "args": {"path": "notes.txt", "content": "hi\n"}},
		"terminal_tools.run": {"description": "read it", "args": {"command": "cat notes.txt"}}
	}`))
	require.NoError(t, err)
	require.Len(t, obs, 2)
	assert.Nil(t, obs[0].Error)
	assert.Equal(t, "terminal_tools.run", obs[1].Tool)
	assert.Equal(t, "hi\n", obs[1].Stdout)

	b, err := g.CreateSandbox(ctx, "life-b", sdk.SandboxOptions{ComputeResources: &schemas.ComputeResources{CPU: "25%"}})
	require.NoError(t, err)
	assert.Equal(t, schemas.StateCreated, b.Status().State)
	assert.Same(t, b, g.Sandbox("life-b"))
	require.NoError(t, b.Start(ctx))
	assert.Equal(t, schemas.StateRunning, b.Status().State)

	descs, err := b.Tools(ctx)
	require.NoError(t, err)
	names := make([]string, 0, len(descs))
	for _, d := range descs {
		names = append(names, d.Name)
	}
	assert.Contains(t, names, "terminal_tools.run")
	assert.Contains(t, names, "filesystem_tools.read_file")

	st, err := b.Refresh(ctx)
	require.NoError(t, err)
	assert.Equal(t, schemas.StateRunning, st.State)
	assert.Equal(t, "life", st.GroupID)
	assert.Equal(t, int64(250_000_000)*4, st.Resources.NanoCPUs, "25%% of the fake engine's 4 CPUs")

	gs, sandboxes, err := g.Refresh(ctx)
	require.NoError(t, err)
	assert.Equal(t, schemas.GroupRunning, gs.State)
	assert.ElementsMatch(t, []string{"life-a", "life-b"}, gs.Sandboxes)
	assert.Len(t, sandboxes, 2)

	u, err := a.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, "life-a", u.SandboxID)
	assert.Equal(t, int64(256<<20), u.Limits.MemoryBytes)
	assert.Positive(t, u.DiskBytes, "notes.txt is in the workspace")

	require.NoError(t, b.End(ctx))
	assert.Nil(t, g.Sandbox("life-b"))
	_, err = b.Refresh(ctx)
	assert.ErrorIs(t, err, sdk.ErrNotFound)

	require.NoError(t, g.End(ctx))
	_, err = a.Refresh(ctx)
	assert.ErrorIs(t, err, sdk.ErrNotFound, "a call after End dials again and finds nothing")
	assert.ErrorIs(t, g.End(ctx), sdk.ErrNotFound, "End twice")
	require.NoError(t, g.Close(), "Close after End")
	_, err = a.Refresh(ctx)
	assert.ErrorIs(t, err, sdk.ErrClosed, "calls after Close")
}

// TestStopOnError checks the option reaches the executor.
func TestStopOnError(t *testing.T) {
	s := startSandox(t)
	_, sb := s.startedSandbox(t, "stop", "stop-a")
	payload := actions(t, `[
		{"tool": "filesystem_tools.read_file", "args": {"path": "missing.txt"}},
		{"tool": "terminal_tools.run", "args": {"command": "echo ran"}}
	]`)
	tests := []struct {
		name     string
		opts     []sdk.SendOption
		wantCode schemas.ErrorCode
	}{
		{name: "goes on by default", wantCode: ""},
		{name: "stops on error", opts: []sdk.SendOption{sdk.StopOnError()}, wantCode: schemas.CodeSkipped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, err := sb.SendActions(t.Context(), payload, tt.opts...)
			require.NoError(t, err, "a failed action is an observation, not an error")
			require.Len(t, obs, 2)
			require.NotNil(t, obs[0].Error)
			if tt.wantCode == "" {
				assert.Nil(t, obs[1].Error)
				assert.Equal(t, "ran\n", obs[1].Stdout)
			} else {
				require.NotNil(t, obs[1].Error)
				assert.Equal(t, tt.wantCode, obs[1].Error.Code)
			}
		})
	}
}

// TestToolFiles checks a group and a sandbox with their own tool files:
// the orchestrator builds an image for them and the status lists their
// modules.
func TestToolFiles(t *testing.T) {
	s := startSandox(t)
	dir := t.TempDir()
	groupTools := filepath.Join(dir, "notes_tools.py")
	ownTools := filepath.Join(dir, "extra_tools.py")
	require.NoError(t, os.WriteFile(groupTools, []byte("def note(text: str) -> str:\n    return text\n"), 0o644))
	require.NoError(t, os.WriteFile(ownTools, []byte("def extra() -> int:\n    return 1\n"), 0o644))
	g := s.newGroup(t, sdk.GroupConfig{ID: "files", Tools: []string{groupTools}})
	require.NoError(t, g.Start(t.Context()))
	sb, err := g.CreateSandbox(t.Context(), "files-a", sdk.SandboxOptions{Tools: []string{ownTools}})
	require.NoError(t, err)
	st := sb.Status()
	assert.Equal(t, []string{"extra_tools", "filesystem_tools", "notes_tools", "terminal_tools"}, st.Tools)
	assert.True(t, strings.HasPrefix(st.Image, "sandox/sandbox-tools:"), "got image %q", st.Image)
	assert.False(t, st.ImageReused)
}
