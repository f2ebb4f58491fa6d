package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// TestWritablePlaces checks, from inside a sandbox as its user, that the
// places it can write are exactly those the security table of
// docs/architecture.md lists, and that /dev/shm is bounded.
func TestWritablePlaces(t *testing.T) {
	g := newGroup(t, sdk.GroupConfig{ID: "it-writable", ComputeResources: schemas.ComputeResources{Memory: "512MiB"}})
	sb := startSandbox(t, g, "it-writable-1", sdk.SandboxOptions{})
	const script = `for m in $(awk '{print $2}' /proc/self/mounts | sort -u); do
  case $m in /proc|/proc/*|/sys|/sys/*) continue;; esac
  [ -w "$m" ] && echo "writable $m"
done
echo "shm-kib $(df -k --output=size /dev/shm | tail -1 | tr -d ' ')"
touch /dev/mqueue/q 2>/dev/null && echo "mqueue-writable" || echo "mqueue-refused"
head -c 100M /dev/zero > /dev/shm/fill 2>/dev/null && echo "shm-unbounded" || echo "shm-full"
rm -f /dev/shm/fill`
	obs := send(t, sb, `[{"tool": "terminal_tools.run", "args": {"command": `+quoteJSON(script)+`, "timeout_seconds": 60}}]`)
	require.Len(t, obs, 1)
	mustOK(t, obs[0])
	var writable []string
	lines := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(obs[0].Stdout), "\n") {
		key, val, _ := strings.Cut(strings.TrimSpace(line), " ")
		if key == "writable" {
			writable = append(writable, val)
		} else {
			lines[key] = val
		}
	}
	assert.ElementsMatch(t, []string{"/workspace", "/tmp", "/dev/shm"}, writable, "output:\n%s", obs[0].Stdout)
	assert.Equal(t, "65536", lines["shm-kib"], "/dev/shm must be a 64 MiB tmpfs")
	assert.Contains(t, lines, "mqueue-refused", "/dev/mqueue must be read-only")
	assert.Contains(t, lines, "shm-full", "100 MiB must not fit in /dev/shm")
}

// quoteJSON returns s as a JSON string.
func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
