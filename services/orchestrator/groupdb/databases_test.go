package groupdb

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

func TestGroupDatabases(t *testing.T) {
	neo := schemas.DatabaseAccess{{Database: schemas.DatabaseNeo4j, Namespace: "kg", Read: true}}
	qd := schemas.DatabaseAccess{{Database: schemas.DatabaseQdrant, Namespace: "docs", Read: true}}
	tests := []struct {
		name string
		spec schemas.GroupSpec
		want []string
	}{
		{"none", schemas.GroupSpec{}, nil},
		{"group grants", schemas.GroupSpec{DatabaseAccess: neo}, []string{"neo4j"}},
		{"a sandbox's grants", schemas.GroupSpec{Sandboxes: []schemas.SandboxSpec{{ID: "a", Databases: &qd}}}, []string{"qdrant"}},
		{"population only", schemas.GroupSpec{PopulationConfig: "databases:\n  qdrant:\n    docs: []\n"}, []string{"qdrant"}},
		{"both, sorted", schemas.GroupSpec{DatabaseAccess: append(qd, neo...)}, []string{"neo4j", "qdrant"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, groupDatabases(tt.spec))
		})
	}
}

func TestDatabasesNeedARuntimeThatRunsThem(t *testing.T) {
	d := New(Config{Network: "sandox-data", QdrantDataDir: "/data"}, nil, nil, nil, nil, slog.New(slog.DiscardHandler))
	_, _, err := d.spec("g", schemas.DatabaseNeo4j)
	assert.ErrorIs(t, err, schemas.CodeUnsupported, "no image configured")
	d.cfg.Neo4jImage, d.cfg.Neo4jPasswordFile = "sandox/neo4j:x", "/secret"
	spec, port, err := d.spec("g", schemas.DatabaseNeo4j)
	assert.NoError(t, err)
	assert.Equal(t, 7687, port)
	assert.Equal(t, "sandox-db-g-neo4j", spec.Name)
	assert.Equal(t, []runtime.Bind{{Source: "/secret", Target: Neo4jPasswordPath, ReadOnly: true}}, spec.Binds)
	assert.Equal(t, "sandox-data", spec.Network)
	assert.Equal(t, map[string]string{"sandox-db-g-neo4j": "/data"}, spec.Volumes)
}
