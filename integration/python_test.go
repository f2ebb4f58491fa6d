package integration

import (
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/services/auth"
)

// TestPythonSDK runs the Python SDK's integration tests
// (sdk/python/tests/integration: the spec's walkthrough, the error paths,
// the asyncio client) against this package's system, as a client with its
// own credentials: `uv run pytest` with SANDOX_NATS_URL and
// SANDOX_NATS_CREDS set, as a user's shell would have them.
// build/scripts/test-deps.sh installs uv.
func TestPythonSDK(t *testing.T) {
	uv, err := exec.LookPath("uv")
	require.NoError(t, err, "uv is needed: build/scripts/test-deps.sh installs it")
	creds := credsFile(t, auth.RoleClient)

	cmd := exec.CommandContext(t.Context(), uv, "run", "--frozen", "pytest", "-v", "-m", "integration",
		"-p", "no:cacheprovider", "tests/integration")
	cmd.Dir = "../sdk/python"
	cmd.Env = append(os.Environ(),
		"SANDOX_IT=1",
		"SANDOX_NATS_URL="+env.url,
		"SANDOX_NATS_CREDS="+creds,
		"UV_PYTHON_DOWNLOADS=never",
	)
	out, err := cmd.CombinedOutput()
	t.Logf("uv run pytest:\n%s", out)
	require.NoError(t, err, "the Python SDK's integration tests failed")
	// Every test ran: none was skipped or deselected.
	summary := regexp.MustCompile(`(?m)^=+ (.*) in [0-9.]+s`).FindSubmatch(out)
	require.NotNil(t, summary, "no pytest summary")
	assert.Regexp(t, `^[0-9]+ passed$`, string(summary[1]))

	for _, group := range []string{"py-walk", "py-bad", "py-gone", "py-aio"} {
		assert.Zero(t, groupContainers(t, group), "containers left by group %s", group)
	}
}
