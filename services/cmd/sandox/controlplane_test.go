package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/data/awsenv"
)

// TestControlPlaneEnviron checks that a container gets its settings and,
// of the operator's variables, only those its prefixes name.
func TestControlPlaneEnviron(t *testing.T) {
	byName := map[string]controlPlaneContainer{}
	for _, c := range controlPlane(upSettings{Neo4jImage: "sandox/neo4j:abc", QdrantImage: "sandox/qdrant-edge:def", QdrantDataDir: "/data", Pool: 3}) {
		byName[c.Service] = c
	}
	operator := []string{"PATH=/bin", "SANDOX_SEARCH_PROVIDER=brave", "SANDOX_EMBED_URL=http://e", "SANDOX_POPULATE_ALLOW=a.example", "SANDOX_POPULATE_ALLOWED=no"}

	assert.Equal(t, []string{"SANDOX_NATS_URL=" + internalNATSURL, "SANDOX_NATS_CREDS=" + searchCredsFile, "SANDOX_SEARCH_PROVIDER=brave"}, byName["search"].environ(operator))
	assert.Equal(t, []string{"SANDOX_NATS_URL=" + internalNATSURL, "SANDOX_NATS_CREDS=" + dataCredsFile, "SANDOX_NEO4J_PASSWORD_FILE=" + dataPasswordFile,
		"SANDOX_POPULATE_DIR=" + populateDir, "SANDOX_EMBED_URL=http://e", "SANDOX_POPULATE_ALLOW=a.example"}, byName["data"].environ(operator))
	orch := byName["orchestrator"].environ(operator)
	assert.Contains(t, orch, "SANDOX_NEO4J_IMAGE=sandox/neo4j:abc")
	assert.Contains(t, orch, "SANDOX_POOL_SIZE=3")
	assert.NotContains(t, orch, "SANDOX_SEARCH_PROVIDER=brave", "the orchestrator passes no operator variable")
	assert.Empty(t, byName["nats"].environ(operator))

	spec := byName["orchestrator"].spec("AKEY", awsenv.Settings{})
	assert.Equal(t, networkName, spec.Network, "the first network is joined at create")
	assert.Equal(t, map[string]string{controlPlaneRole: "orchestrator", authorityLabel: "AKEY"}, spec.Labels)
	assert.True(t, spec.RestartUnlessStopped)
	assert.False(t, spec.Hardened, "the orchestrator attaches loop devices")
	assert.True(t, byName["nats"].spec("AKEY", awsenv.Settings{}).Hardened)

	// The dashboard: hardened, on the control plane's network only,
	// published on the host's loopback, its token from its secrets.
	dash := byName["dashboard"].spec("AKEY", awsenv.Settings{})
	assert.True(t, dash.Hardened)
	assert.Equal(t, "10002:10002", dash.User)
	assert.Equal(t, []string{networkName}, byName["dashboard"].Networks)
	assert.Equal(t, map[string]string{"8089/tcp": "8089"}, dash.PublishLocal)
	assert.Equal(t, []string{"SANDOX_NATS_URL=" + internalNATSURL, "SANDOX_NATS_CREDS=" + dashboardCredsFile,
		"SANDOX_DASHBOARD_TOKEN_FILE=" + dashboardTokenFile}, byName["dashboard"].environ(operator))
	assert.Equal(t, "http://127.0.0.1:8089/?token=abc", dashboardURL("abc"))
	assert.NotEqual(t, tokenDigest("a"), tokenDigest("b"))
	assert.NotContains(t, tokenDigest("abc"), "abc")

	// The operator's AWS settings go to the data service only, with their
	// digest as a label.
	aws := awsenv.Settings{Env: []string{"AWS_REGION=eu-west-3"}, Digest: "d1"}
	for name, c := range byName {
		spec := c.spec("AKEY", aws)
		if name == "data" {
			assert.Contains(t, spec.Env, "AWS_REGION=eu-west-3")
			assert.Equal(t, "d1", spec.Labels[awsLabel])
			continue
		}
		assert.NotContains(t, spec.Env, "AWS_REGION=eu-west-3", name)
		assert.NotContains(t, spec.Labels, awsLabel, name)
	}
}

// TestControlPlaneSecrets checks the files copied into each container:
// credentials of the right role signed by the authority, the neo4j
// password, and the authority's seeds for NATS.
func TestControlPlaneSecrets(t *testing.T) {
	a, err := auth.LoadOrCreateAuthority(t.TempDir())
	require.NoError(t, err)
	src := secretSources{authority: a, neo4jPassword: []byte("pw"), dashboardToken: "tok"}
	roles := map[string]auth.Role{"orchestrator": auth.RoleControl, "data": auth.RoleData, "search": auth.RoleSearch, "dashboard": auth.RoleClient}
	for _, c := range controlPlane(upSettings{}) {
		files, err := c.CopyIn.files(src)
		require.NoError(t, err, c.Service)
		if c.Service == "nats" {
			seeds, err := a.Files()
			require.NoError(t, err)
			assert.Equal(t, seeds, files)
			continue
		}
		creds, err := auth.ParseCreds(files["nats.creds"])
		require.NoError(t, err, c.Service)
		assert.True(t, a.Issued(creds), c.Service)
		assert.True(t, auth.Current(creds, roles[c.Service]), "%s has the %s role", c.Service, roles[c.Service])
		if c.Service == "data" {
			assert.Equal(t, []byte("pw"), files["neo4j-password"])
		}
		assert.Equal(t, c.Service == "dashboard", c.CopyIn.wantsDashboardToken(), c.Service)
		if c.Service == "dashboard" {
			assert.Equal(t, []byte("tok\n"), files["token"])
			assert.Equal(t, dashboardTokenFile, c.CopyIn.Dir+"/token", "the file SANDOX_DASHBOARD_TOKEN_FILE names")
			_, err := c.CopyIn.files(secretSources{authority: a})
			assert.ErrorContains(t, err, "no dashboard token")
		}
	}
	_, err = secretDir{Dir: "/x", Files: []secret{{Name: "f"}}}.files(src)
	assert.ErrorContains(t, err, "no source")
}
