package orchestrator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/groupdb"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// TestReconcileDatabases checks that a worker starting removes the database
// containers of groups without a record, keeps their volumes, and leaves
// alone those of live groups and of other systems on the same engine.
func TestReconcileDatabases(t *testing.T) {
	h := newIdleHarness(t, func(c *Config) { c.System = "unit" })
	ctx := t.Context()
	err := h.w.store.CreateGroup(ctx, &schemas.GroupStatus{ID: "alive", State: schemas.GroupRunning})
	require.NoError(t, err)
	h.rt.AddImage("db-image", "sha256:db")
	run := func(group, system string) string {
		t.Helper()
		spec := runtime.ContainerSpec{
			Name:    groupdb.Name(group, schemas.DatabaseQdrant) + "-" + system,
			Image:   "db-image",
			Labels:  map[string]string{runtime.LabelManaged: "true", runtime.LabelGroup: group, runtime.LabelDatabase: schemas.DatabaseQdrant, runtime.LabelSystem: system},
			Volumes: map[string]string{groupdb.Name(group, schemas.DatabaseQdrant) + "-" + system: "/data"},
		}
		id, err := h.rt.Create(ctx, spec)
		require.NoError(t, err)
		return id
	}
	alive := run("alive", "unit")
	gone := run("gone", "unit")
	other := run("gone", "another")

	h.w.databases.Reconcile(ctx)

	tests := []struct {
		name string
		id   string
		kept bool
	}{
		{"a live group's database", alive, true},
		{"a database whose group is gone", gone, false},
		{"another system's database", other, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.rt.Inspect(ctx, tt.id)
			if tt.kept {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, runtime.ErrNotFound)
			}
		})
	}
	assert.Contains(t, h.rt.Volumes(), groupdb.Name("gone", schemas.DatabaseQdrant)+"-unit", "the data stays")
}
