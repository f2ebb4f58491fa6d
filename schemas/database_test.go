package schemas

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDatabaseSubjects(t *testing.T) {
	grants := DatabaseAccess{
		{Database: DatabaseNeo4j, Namespace: "pub", Read: true},
		{Database: DatabaseQdrant, Namespace: "work", Write: true},
		{Database: DatabaseQdrant, Namespace: "none"},
	}
	assert.Equal(t, []string{
		"sandox.db.sb.list",
		"sandox.db.sb.neo4j.pub.read",
		"sandox.db.sb.qdrant.work.read", "sandox.db.sb.qdrant.work.write",
	}, DatabaseGrantSubjects("sb", grants))

	tests := []struct {
		name    string
		subject string
		want    DatabaseCall
		wantErr bool
	}{
		{"read", "sandox.db.sb.neo4j.pub.read", DatabaseCall{"sb", "neo4j", "pub", DatabaseRead}, false},
		{"write", "sandox.db.sb.qdrant.work.write", DatabaseCall{"sb", "qdrant", "work", DatabaseWrite}, false},
		{"list", "sandox.db.sb.list", DatabaseCall{SandboxID: "sb"}, false},
		{"bad op", "sandox.db.sb.neo4j.pub.admin", DatabaseCall{}, true},
		{"too short", "sandox.db.sb.neo4j", DatabaseCall{}, true},
		{"other prefix", "sandox.svc.search", DatabaseCall{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDatabaseSubject(tt.subject)
			if tt.wantErr {
				require.ErrorIs(t, err, CodeBadRequest)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	assert.True(t, grants.Allows(DatabaseNeo4j, "pub", DatabaseRead))
	assert.False(t, grants.Allows(DatabaseNeo4j, "pub", DatabaseWrite))
	assert.True(t, grants.Allows(DatabaseQdrant, "work", DatabaseRead), "write implies read")
	assert.False(t, grants.Allows(DatabaseQdrant, "none", DatabaseRead))
	assert.False(t, grants.Allows(DatabaseNeo4j, "work", DatabaseRead))
	require.NoError(t, grants.Validate())
	assert.Error(t, DatabaseAccess{{Database: "neo4j", Namespace: "a.b"}}.Validate())
	assert.Error(t, DatabaseAccess{{Database: "pg", Namespace: "a"}}.Validate())
}
