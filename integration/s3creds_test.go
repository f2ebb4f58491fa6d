package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/internal/s3double"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/data/awsenv"
)

// TestS3CredentialsReachTheDataContainer proves that the operator's AWS
// credentials reach sandox-data as `sandox up` gives them: the data
// service runs as a container of the control image, as `sandox up` makes
// it (uid 10002, hardened, its secrets copied in with that owner) with the
// variables and files of awsenv.ForContainer (what `sandox up` calls) for
// the test's environment, in place of the test system's data service in
// process. A group's population names an s3:// source on a test double of
// S3 (s3double) that checks each request's SigV4 signature against one key
// pair. With that pair in the operator's ~/.aws/credentials (0600, the
// test's uid, which the container's uid could not read through a bind),
// the objects load; with another access key id in the operator's
// environment, which the SDK prefers, the source is reported to the
// client with S3's refusal, and nothing loads.
func TestS3CredentialsReachTheDataContainer(t *testing.T) {
	image := controlImage(t)
	u, err := url.Parse(env.url)
	require.NoError(t, err)
	gateway := u.Hostname()

	s3 := s3double.New("AKIDSANDOXOPERATOR", "operator-secret-key")
	require.NoError(t, s3.Put("corpus", "docs/a.jsonl", `{"id":"s3-a","text":"a ledger signed for by the operator"}`+"\n"+
		`{"id":"s3-b","text":"a second signed document"}`+"\n"))
	lis, err := net.Listen("tcp", net.JoinHostPort(gateway, "0"))
	require.NoError(t, err)
	srv := &http.Server{Handler: s3, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	population := writeFile(t, "population.yaml", fmt.Sprintf(`s3: {endpoint: "http://%s", region: us-east-1}
databases:
  qdrant:
    corpus:
      - source: s3://corpus/docs/
`, lis.Addr()))

	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".aws", "credentials"),
		[]byte("[default]\naws_access_key_id = AKIDSANDOXOPERATOR\naws_secret_access_key = operator-secret-key\n"), 0o600))
	t.Setenv("HOME", home)
	// Only what each case sets: none of the machine's AWS_* (such as an
	// AWS_CA_BUNDLE) passes.
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "AWS_") {
			t.Setenv(name, "")
		}
	}
	withoutDataService(t)

	t.Run("the operator's shared credentials file", func(t *testing.T) {
		c := startDataContainer(t, image, gateway)
		assert.Contains(t, c.Env, "AWS_SHARED_CREDENTIALS_FILE=/etc/sandox-data/aws-credentials")
		for _, kv := range c.Env {
			assert.NotContains(t, kv, "operator-secret-key", "the secret is in a file, not in the container's environment")
		}
		events := populateGroup(t, "it-s3-file", population)
		assert.Empty(t, events.bad())
		assert.Equal(t, 2, events.loaded(), "documents loaded")
		assert.Zero(t, s3.Refused())
	})
	t.Run("another access key id in the operator's environment", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDSTRANGER")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "operator-secret-key")
		startDataContainer(t, image, gateway)
		events := populateGroup(t, "it-s3-stranger", population)
		bad := events.bad()
		require.Len(t, bad, 1)
		assert.Equal(t, "s3://corpus/docs/", bad[0].Source)
		assert.Contains(t, bad[0].Reason, "StatusCode: 403")
		assert.Contains(t, bad[0].Reason, "api error InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our records.")
		assert.Zero(t, events.loaded())
		assert.Equal(t, int64(1), s3.Refused())
	})
}

// controlImage builds the control image (sandox/control, whose sandox-data
// `sandox up` runs) and returns its id, so that a build of another tree
// under the same tag cannot change what the test runs.
func controlImage(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	cfg := build.DefaultConfig(root)
	if testing.Verbose() {
		cfg.Progress = os.Stderr
	}
	require.NoError(t, build.NewBuilder(env.docker, cfg).Control(t.Context()))
	id, err := env.docker.ImageID(t.Context(), build.ControlImage)
	require.NoError(t, err)
	return id
}

// withoutDataService stops the test system's data service in process for
// the test, so that only the test's container answers, and starts it again
// afterwards.
func withoutDataService(t *testing.T) {
	t.Helper()
	dataEnv.stop()
	t.Cleanup(func() {
		stop, err := startDataService(context.Background())
		require.NoError(t, err)
		dataEnv.stop = stop
	})
}

// startDataContainer runs sandox-data as `sandox up` does (services/cmd/
// sandox/up.go), on the test system's NATS, with the AWS settings of the
// test's environment, and waits until it answers population requests.
// The container goes at the end of the test.
func startDataContainer(t *testing.T, image, gateway string) docker.State {
	t.Helper()
	ctx := t.Context()
	const dir = "/etc/sandox-data"
	aws, err := awsenv.ForContainer(os.Environ(), dir)
	require.NoError(t, err)
	creds, err := env.auth.Mint("integration data container", auth.RoleData, "")
	require.NoError(t, err)
	credsFile, err := creds.File()
	require.NoError(t, err)
	files := map[string][]byte{"nats.creds": credsFile, "neo4j-password": []byte(dataEnv.neo4jPassword)}
	for name, data := range aws.Files {
		files[name] = data
	}
	name := fmt.Sprintf("sandox-it-data-%d", os.Getpid())
	_ = env.docker.Remove(ctx, name)
	id, err := env.docker.Create(ctx, docker.ContainerSpec{
		Name:    name,
		Image:   image,
		Cmd:     []string{"sandox-data"},
		User:    "10002:10002",
		Network: env.network,
		Labels:  map[string]string{"dev.sandox.test": "true"},
		Env: append([]string{"SANDOX_NATS_URL=" + env.url, "SANDOX_NATS_CREDS=" + dir + "/nats.creds",
			"SANDOX_NEO4J_PASSWORD_FILE=" + dir + "/neo4j-password", "SANDOX_POPULATE_ALLOW=" + gateway}, aws.Env...),
		Hardened: true,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := env.docker.Logs(context.Background(), id, 50)
			t.Logf("sandox-data container's logs:\n%s", logs)
		}
		assert.NoError(t, env.docker.Remove(context.Background(), id))
	})
	// The database network, which the worker makes when a first group
	// with a database starts.
	_, err = env.docker.EnsureNetwork(ctx, env.worker.DatabaseNetwork, map[string]string{"dev.sandox.test": "true"})
	require.NoError(t, err)
	require.NoError(t, env.docker.ConnectNetwork(ctx, env.worker.DatabaseNetwork, id))
	require.NoError(t, env.docker.CopyDir(ctx, id, dir, 10002, files))
	require.NoError(t, env.docker.Start(ctx, id))
	// It answers a population request (of a group that does not exist),
	// which the control plane's identity may send, once it serves.
	control, err := connectAs(auth.RoleControl)
	require.NoError(t, err)
	defer control.Close()
	req, _ := json.Marshal(schemas.PopulateRequest{GroupID: "it-s3-none"})
	require.Eventually(t, func() bool {
		_, err := control.Request(schemas.PopulateSubject, req, time.Second)
		return err == nil
	}, 60*time.Second, 250*time.Millisecond, "the data container answers %s", schemas.PopulateSubject)
	st, err := env.docker.Inspect(ctx, id)
	require.NoError(t, err)
	return st
}

// populateGroup starts a group with a Qdrant populated by the config at
// path, and returns its population events once it runs.
func populateGroup(t *testing.T, group, path string) *populationEvents {
	t.Helper()
	keepDatabaseVolumes(group)
	events := followPopulation(t, group)
	newGroup(t, sdk.GroupConfig{ID: group, PopulationConfig: path,
		DatabaseAccess: schemas.DatabaseAccess{{Database: schemas.DatabaseQdrant, Namespace: "corpus", Read: true}}})
	// The last event of the population is published before the reply that
	// lets the group run, but may reach this client after.
	require.Eventually(t, func() bool { return events.sourcesDone() == 1 }, 10*time.Second, 50*time.Millisecond)
	return events
}

// sourcesDone counts the sources whose last event came.
func (p *populationEvents) sourcesDone() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, e := range p.all {
		if e.Done {
			n++
		}
	}
	return n
}

// loaded sums what the sources loaded, from their last events.
func (p *populationEvents) loaded() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, e := range p.all {
		if e.Done {
			n += e.Loaded
		}
	}
	return n
}
