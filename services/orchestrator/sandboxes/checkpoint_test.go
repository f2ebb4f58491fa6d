package sandboxes

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/checkpoints"
)

// TestCheckpointRefusals runs the checkpoint commands with a real
// checkpoint store on sandboxes that cannot be checkpointed: one that
// does not exist, one of another group, one that is not running. None of
// them reaches the engine (the archiver), which this in-memory engine
// does not have; integration/checkpoints_test.go runs them on Docker.
func TestCheckpointRefusals(t *testing.T) {
	f := newFixture(t, func(f *fixture, p *Parts) {
		js, err := jetstream.New(f.nc)
		require.NoError(f.t, err)
		store, err := checkpoints.OpenStore(f.t.Context(), js, checkpoints.StoreConfig{Replicas: 1})
		require.NoError(f.t, err)
		p.Checkpoints = checkpoints.New(store, nil, checkpoints.Config{Workspace: Workspace, UID: UID})
	})
	ctx := t.Context()
	g := f.group("g1", schemas.GroupSpec{})
	st, err := f.s.Make(ctx, g, schemas.SandboxSpec{ID: "created"}, "cmd-1")
	require.NoError(t, err)

	tests := []struct {
		name string
		cmd  schemas.Command
		want schemas.ErrorCode
	}{
		{"take of a sandbox that does not exist", command(schemas.TakeCheckpoint, "g1", "nobody"), schemas.CodeNotFound},
		{"rollback of a sandbox of another group", command(schemas.RollbackSandbox, "g2", "created"), schemas.CodeNotFound},
		{"take of a sandbox not running", command(schemas.TakeCheckpoint, "g1", "created"), schemas.CodeConflict},
		{"list of a sandbox that left none", command(schemas.ListCheckpoints, "g1", "nobody"), schemas.CodeNotFound},
		{"a bad sandbox id", command(schemas.ListCheckpoints, "g1", "no spaces"), schemas.CodeBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.Checkpoint(ctx, tc.cmd)
			require.ErrorIs(t, err, tc.want)
		})
	}
	res, err := f.s.Checkpoint(ctx, command(schemas.ListCheckpoints, "g1", "created"))
	require.NoError(t, err, "a sandbox that exists lists its checkpoints, none yet")
	assert.Empty(t, res.Checkpoints)
	assert.NotNil(t, res.Checkpoints)
	assert.Equal(t, schemas.StateCreated, st.State)
}
