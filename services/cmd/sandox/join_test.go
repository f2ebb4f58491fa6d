package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJoinedRow checks the orchestrator's row as `sandox up -join` runs
// it: every setting of `sandox up`'s worker (the databases' among them),
// pointed at the first host's NATS and the forwarded socket, named after
// its host, on the host's network, driving DOCKER_HOST's engine.
func TestJoinedRow(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///run/sandox-docker2.sock")
	var orch controlPlaneContainer
	for _, c := range controlPlane(upSettings{Neo4jImage: "sandox/neo4j:abc", QdrantImage: "sandox/qdrant-edge:def", QdrantDataDir: "/data", Pool: 2}) {
		if c.PerHost {
			orch = c
		}
	}
	require.Equal(t, "orchestrator", orch.Service, "the worker is the one row per host")
	j := orch.joined(joinOptions{URL: "nats://127.0.0.1:4222", Host: "host-b", Socket: "/run/sandox-nats", Dir: "/var/lib/sandox-b"})
	env := map[string]string{}
	for _, s := range j.Env {
		env[s.Key] = s.Value
	}
	for _, s := range orch.Env {
		assert.Contains(t, env, s.Key, "the joined worker has every setting of sandox up's")
	}
	assert.Equal(t, "nats://127.0.0.1:4222", env["SANDOX_NATS_URL"])
	assert.Equal(t, "/run/sandox-nats", env["SANDOX_NATS_SOCKET"])
	assert.Equal(t, "orchestrator-host-b", env["SANDOX_WORKER"])
	assert.Equal(t, "host-b", env["SANDOX_HOST"])
	assert.Equal(t, "sandox/neo4j:abc", env["SANDOX_NEO4J_IMAGE"])
	assert.Equal(t, databaseNetwork, env["SANDOX_DATABASE_NETWORK"])
	assert.Equal(t, []string{"host"}, j.Networks)
	assert.Contains(t, j.Binds, "/run/sandox-docker2.sock:/var/run/docker.sock")
	assert.Contains(t, orch.Binds, "/var/run/docker.sock:/var/run/docker.sock", "the table's row is left as it was")
	assert.Contains(t, orch.Env, setting{Key: "SANDOX_WORKER", Value: "orchestrator-1"}, "the table's row is left as it was")
	assert.Equal(t, "/var/lib/sandox-b/creds", env["SANDOX_CREDS_DIR"])
	assert.Equal(t, "/var/lib/sandox-b/disks", env["SANDOX_DISKS_DIR"])
	assert.Equal(t, "/var/lib/sandox-b/egress", env["SANDOX_EGRESS_DIR"])
	for _, dir := range []string{"creds", "disks", "egress"} {
		assert.Contains(t, j.Binds, "/var/lib/sandox-b/"+dir+":/var/lib/sandox-b/"+dir)
	}

	t.Setenv("DOCKER_HOST", "")
	assert.Equal(t, "/var/run/docker.sock", engineSocket())
}

// TestJoinRefusesBadInput checks the errors of `sandox up -join` that
// need no engine.
func TestJoinRefusesBadInput(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "x.creds")
	require.NoError(t, os.WriteFile(creds, []byte("not creds"), 0o600))
	for _, tt := range []struct {
		name string
		o    joinOptions
		want string
	}{
		{"no host", joinOptions{URL: "nats://a:4222"}, "want a host name"},
		{"a host that is no subject token", joinOptions{URL: "nats://a:4222", Host: "b.c"}, "want a host name"},
		{"no credentials", joinOptions{URL: "nats://a:4222", Host: "b"}, "needs -creds"},
		{"credentials missing", joinOptions{URL: "nats://a:4222", Host: "b", Creds: "/nonexistent"}, "-creds"},
		{"not credentials", joinOptions{URL: "nats://a:4222", Host: "b", Creds: creds}, "-creds " + creds},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorContains(t, join(t.Context(), nil, tt.o), tt.want)
		})
	}
}
