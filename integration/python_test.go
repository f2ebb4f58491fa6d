package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/audit"
	"github.com/sandox/sandox/services/auth"
)

// formatTools is a user tool file whose schema the two SDKs must export
// alike.
const formatTools = `def shout(text: str, times: int = 1) -> str:
    """Shouts the text, times times."""
    return (text.upper() + "!") * times
`

// TestPythonSDK runs the Python SDK's integration tests
// (sdk/python/tests/integration: the spec's walkthrough, the error paths,
// the asyncio client, the tool export against the Go SDK's, lifetimes set
// from Python ending sandboxes by themselves, a function passed in tools)
// against this
// package's system, as a client with its
// own credentials: `uv run pytest` with SANDOX_NATS_URL and
// SANDOX_NATS_CREDS set, as a user's shell would have them.
// build/scripts/test-deps.sh installs uv.
func TestPythonSDK(t *testing.T) {
	// One of the package's longest tests (the Python SDK's integration tests run in it), on its own
	// group: it runs beside the other parallel ones (see doc.go).
	t.Parallel()
	uv, err := exec.LookPath("uv")
	require.NoError(t, err, "uv is needed: build/scripts/test-deps.sh installs it")
	creds := credsFile(t, auth.RoleClient)

	// The tool export must be the same from both SDKs: the Go SDK writes a
	// sandbox's tools in every format, and the Python test compares its own.
	g := newGroup(t, sdk.GroupConfig{ID: "py-formats", Tools: []string{writeFile(t, "fmt_tools.py", formatTools)}})
	sb := startSandbox(t, g, "py-formats-sb", sdk.SandboxOptions{})
	formats := t.TempDir()
	for _, f := range sdk.ToolFormats {
		data, err := sb.ToolsAs(t.Context(), f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(formats, string(f)+".json"), data, 0o644))
	}

	cmd := exec.CommandContext(t.Context(), uv, "run", "--frozen", "pytest", "-v", "-m", "integration",
		"-p", "no:cacheprovider", "tests/integration")
	cmd.Dir = "../sdk/python"
	cmd.Env = append(os.Environ(),
		"SANDOX_IT=1",
		"SANDOX_NATS_URL="+env.url,
		"SANDOX_NATS_CREDS="+creds,
		"UV_PYTHON_DOWNLOADS=never",
		"SANDOX_IT_FORMATS="+formats,
		"SANDOX_IT_FORMATS_SANDBOX="+sb.ID(),
	)
	out, err := cmd.CombinedOutput()
	t.Logf("uv run pytest:\n%s", out)
	require.NoError(t, err, "the Python SDK's integration tests failed")
	// Every test ran: none was skipped or deselected.
	summary := regexp.MustCompile(`(?m)^=+ (.*) in [0-9.]+s`).FindSubmatch(out)
	require.NotNil(t, summary, "no pytest summary")
	assert.Regexp(t, `^[0-9]+ passed$`, string(summary[1]))

	for _, group := range []string{"py-walk", "py-bad", "py-gone", "py-aio", "py-life", "py-fn", "py-pause", "py-ckpt"} {
		assert.Zero(t, groupContainers(t, group), "containers left by group %s", group)
	}

	// The Python SDK signs its commands as the Go SDK does: the audit log
	// records each with its verified caller.
	js, err := jetstream.New(env.nc)
	require.NoError(t, err)
	commands := 0
	require.NoError(t, audit.Replay(t.Context(), js, audit.Filter{Group: "py-walk", Kinds: []string{string(audit.KindCommand)}}, false, func(e audit.Entry) error {
		commands++
		if assert.NotNil(t, e.Caller, "command %s", e.What) {
			assert.True(t, e.Caller.Verified, "command %s: caller %+v", e.What, *e.Caller)
			assert.Equal(t, string(auth.RoleClient), e.Caller.Role, "command %s", e.What)
		}
		return nil
	}))
	assert.Positive(t, commands, "the walkthrough's commands are in the audit log")

	// And its action batches, each signed over its id and its actions.
	batches := 0
	require.NoError(t, audit.Replay(t.Context(), js, audit.Filter{Group: "py-walk", Kinds: []string{string(audit.KindBatch)}}, false, func(e audit.Entry) error {
		batches++
		if assert.NotNil(t, e.Caller, "batch %s", e.BatchID) {
			assert.True(t, e.Caller.Verified, "batch %s: caller %+v", e.BatchID, *e.Caller)
		}
		return nil
	}))
	assert.Positive(t, batches, "the walkthrough's batches are in the audit log")
}
