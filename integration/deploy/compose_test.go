package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/docker"
	"github.com/sandox/sandox/services/orchestrator"
)

// TestCompose runs compose.yaml as docs/running.md says: `sandox
// secrets`, then `docker-compose up -d`, under a project name, a NATS port
// and a system label of its own (compose.yaml's COMPOSE_PROJECT_NAME,
// SANDOX_NATS_PORT, SANDOX_SYSTEM), so that it runs beside `sandox up`.
// It checks that the four services run under the project's names, that a
// sandbox can be created and answers a batch, and that `docker-compose
// down -v` leaves nothing of the project.
func TestCompose(t *testing.T) {
	compose := requireTool(t, "docker-compose")
	ctx := t.Context()
	root := repoRoot(t)
	buildImages(t)
	tmp := t.TempDir()
	cli := buildCLI(t, tmp)
	config := filepath.Join(tmp, "config")
	secrets := filepath.Join(tmp, "secrets")
	run(t, ctx, root, []string{"XDG_CONFIG_HOME=" + config}, cli, "secrets", "-o", secrets)

	project := fmt.Sprintf("sandox-ct%d", os.Getpid())
	port := freePort(t)
	env := []string{
		"COMPOSE_PROJECT_NAME=" + project,
		"SANDOX_NATS_PORT=" + strconv.Itoa(port),
		"SANDOX_SECRETS_DIR=" + secrets,
		"SANDOX_SYSTEM=" + project,
		"SANDOX_POOL_SIZE=0",
	}
	d, err := docker.New(ctx)
	require.NoError(t, err)
	defer d.Close()
	down := func(ctx context.Context) {
		run(t, ctx, root, env, compose, "-f", "compose.yaml", "down", "-v", "--timeout", "5")
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return // the test took it down and checked
		}
		for _, name := range []string{"nats", "orchestrator", "data", "search"} {
			out, _ := d.Logs(context.Background(), project+"-"+name, 30)
			t.Logf("%s-%s:\n%s", project, name, out)
		}
		down(context.Background())
	})
	run(t, ctx, root, env, compose, "-f", "compose.yaml", "up", "-d")

	for _, name := range []string{"nats", "orchestrator", "data", "search"} {
		st, err := d.Inspect(ctx, project+"-"+name)
		require.NoError(t, err, "the project's %s container", name)
		assert.True(t, st.Running, "%s-%s runs", project, name)
	}
	nc := connectWithin(t, "nats://127.0.0.1:"+strconv.Itoa(port), filepath.Join(config, "sandox", sdk.ClientCredentialsFile), time.Minute)
	waitConsumer(t, nc, 2*time.Minute)
	st := echoed(t, nc, project, "hello-from-compose", sdk.SandboxOptions{})
	assert.Equal(t, "running", string(st.State))

	down(ctx)
	left, err := d.List(ctx, orchestrator.LabelSystem+"="+project)
	require.NoError(t, err)
	assert.Empty(t, left, "containers of the project's system left after down")
	for _, name := range []string{"nats", "orchestrator", "data", "search"} {
		_, err := d.Inspect(ctx, project+"-"+name)
		assert.Error(t, err, "%s-%s removed", project, name)
	}
}
