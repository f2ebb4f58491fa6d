package deploy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// composeServices are compose.yaml's services, each container named
// <project>-<service>.
var composeServices = []string{"nats", "orchestrator", "data", "search", "dashboard"}

// composeHost is compose.yaml brought up by `docker-compose` under a
// project of its own.
type composeHost struct {
	compose, root string
	project       string
	port          int
	dashboardPort int
	cli           string // the sandox command, built for the test
	config        string // XDG_CONFIG_HOME of the sandox command: the authority and client credentials
	env           []string
	nc            *nats.Conn // a client connection
	docker        *docker.Client
	isDown        bool
}

// upCompose runs compose.yaml as docs/running.md says: `sandox secrets`,
// then `docker-compose up -d`, under a project name, a NATS port and a
// system label of its own (compose.yaml's COMPOSE_PROJECT_NAME,
// SANDOX_NATS_PORT, SANDOX_DASHBOARD_PORT, SANDOX_SYSTEM), so that it runs
// beside `sandox up`.
// It returns once an orchestrator consumes; on failure the services' logs
// are shown and the project is taken down.
func upCompose(t *testing.T) *composeHost {
	t.Helper()
	h := &composeHost{compose: requireTool(t, "docker-compose"), root: repoRoot(t)}
	ctx := t.Context()
	buildImages(t)
	tmp := t.TempDir()
	h.cli = buildCLI(t, tmp)
	h.config = filepath.Join(tmp, "config")
	secrets := filepath.Join(tmp, "secrets")
	run(t, ctx, h.root, []string{"XDG_CONFIG_HOME=" + h.config}, h.cli, "secrets", "-o", secrets)

	h.project = fmt.Sprintf("sandox-ct%d", os.Getpid())
	h.port = freePort(t)
	h.dashboardPort = freePort(t)
	h.env = []string{
		"COMPOSE_PROJECT_NAME=" + h.project,
		"SANDOX_NATS_PORT=" + strconv.Itoa(h.port),
		"SANDOX_DASHBOARD_PORT=" + strconv.Itoa(h.dashboardPort),
		"SANDOX_SECRETS_DIR=" + secrets,
		"SANDOX_SYSTEM=" + h.project,
		"SANDOX_POOL_SIZE=0",
	}
	d, err := docker.New(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	h.docker = d
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range composeServices {
				out, _ := d.Logs(context.Background(), h.project+"-"+name, 30)
				t.Logf("%s-%s:\n%s", h.project, name, out)
			}
		}
		if !h.isDown {
			h.down(t, context.Background())
		}
		// The orchestrator's host directories (compose.yaml names them
		// after the project).
		assert.NoError(t, os.RemoveAll("/var/lib/"+h.project))
	})
	run(t, ctx, h.root, h.env, h.compose, "-f", "compose.yaml", "up", "-d")
	for _, name := range composeServices {
		st, err := d.Inspect(ctx, h.project+"-"+name)
		require.NoError(t, err, "the project's %s container", name)
		assert.True(t, st.Running, "%s-%s runs", h.project, name)
	}
	h.nc = connectWithin(t, h.url(), filepath.Join(h.config, "sandox", sdk.ClientCredentialsFile), time.Minute)
	waitConsumer(t, h.nc, 2*time.Minute)
	return h
}

// url is the project's NATS on loopback.
func (h *composeHost) url() string { return "nats://127.0.0.1:" + strconv.Itoa(h.port) }

// down takes the project down with its volumes.
func (h *composeHost) down(t *testing.T, ctx context.Context) {
	h.isDown = true
	run(t, ctx, h.root, h.env, h.compose, "-f", "compose.yaml", "down", "-v", "--timeout", "5")
}

// TestCompose runs compose.yaml (upCompose) and checks that the five
// services run under the project's names, that a sandbox can be created
// and answers a batch, that the dashboard, through its published port,
// wants the token `sandox secrets` made and shows that sandbox's history
// with it, and that `docker-compose down -v` leaves nothing of the
// project.
func TestCompose(t *testing.T) {
	h := upCompose(t)
	ctx := t.Context()
	st := echoed(t, h.nc, h.project, "hello-from-compose", sdk.SandboxOptions{})
	assert.Equal(t, "running", string(st.State))
	h.checkDashboard(t, st.ID, "hello-from-compose")

	h.down(t, ctx)
	left, err := h.docker.List(ctx, runtime.LabelSystem+"="+h.project)
	require.NoError(t, err)
	assert.Empty(t, left, "containers of the project's system left after down")
	for _, name := range composeServices {
		_, err := h.docker.Inspect(ctx, h.project+"-"+name)
		assert.Error(t, err, "%s-%s removed", h.project, name)
	}
}

// checkDashboard reads the project's dashboard on its published port: the
// overview without the token is refused, and with the token of `sandox
// secrets` (~/.config/sandox/dashboard.token of its config directory) the
// sandbox's page shows its batch, marker included, and the overview names
// the sandbox.
func (h *composeHost) checkDashboard(t *testing.T, sandbox, marker string) {
	t.Helper()
	token, err := os.ReadFile(filepath.Join(h.config, "sandox", "dashboard.token"))
	require.NoError(t, err)
	base := "http://127.0.0.1:" + strconv.Itoa(h.dashboardPort)
	get := func(path string, withToken bool) (int, string, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		if err != nil {
			return 0, "", err
		}
		if withToken {
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		return res.StatusCode, string(body), err
	}
	code, _, err := get("/", false)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, code, "the dashboard without its token")
	var last string
	if !assert.Eventually(t, func() bool {
		code, body, err := get("/sandboxes/"+sandbox, true)
		last = fmt.Sprintf("%d %v %.300s", code, err, body)
		return code == http.StatusOK && strings.Contains(body, marker)
	}, time.Minute, 500*time.Millisecond, "the sandbox's page shows its batch") {
		t.Logf("last answer: %s", last)
	}
	if !assert.Eventually(t, func() bool {
		code, body, err := get("/", true)
		last = fmt.Sprintf("%d %v %.300s", code, err, body)
		return code == http.StatusOK && strings.Contains(body, sandbox)
	}, time.Minute, 500*time.Millisecond, "the overview names the sandbox") {
		t.Logf("last answer: %s", last)
	}
}
