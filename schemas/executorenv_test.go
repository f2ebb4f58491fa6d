package schemas

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// getenv reads an environment in KEY=VALUE form, as a container gets it.
func getenv(environ []string) func(string) string {
	m := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

func TestExecutorEnvRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		env  ExecutorEnv
	}{
		{"everything", ExecutorEnv{
			SandboxID: "sb-1", GroupID: "g-1", NATSURL: "nats://sandox-nats:4222", NATSCreds: "/run/creds",
			Families: []string{"filesystem_tools", "web_tools"}, ToolsDir: "/tools", Workspace: "/ws",
			PackageIndex: "/wheels", DiskBytes: 64 << 20, CgroupRoot: "/cg", Debug: true,
		}},
		{"required only, defaults filled in", ExecutorEnv{
			SandboxID: "sb-2", NATSURL: "nats://127.0.0.1:4222",
			ToolsDir: DefaultToolsDir, Workspace: DefaultWorkspace, CgroupRoot: DefaultCgroupRoot,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got ExecutorEnv
			require.NoError(t, got.FromEnv(getenv(tt.env.Environ())))
			assert.Equal(t, tt.env, got)
		})
	}
}

func TestExecutorEnvEnvironNames(t *testing.T) {
	env := ExecutorEnv{SandboxID: "sb-1", GroupID: "g-1", NATSURL: "nats://x:4222", Families: []string{"a", "b"}, DiskBytes: 1}
	assert.ElementsMatch(t, []string{
		"SANDOX_SANDBOX_ID=sb-1",
		"SANDOX_GROUP_ID=g-1",
		"SANDOX_NATS_URL=nats://x:4222",
		"SANDOX_TOOL_FAMILIES=a,b",
		"SANDOX_DISK_BYTES=1",
	}, env.Environ())
}

func TestExecutorEnvFromEnvErrors(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    []string // substrings of the error; none means no error
	}{
		{"complete", []string{"SANDOX_SANDBOX_ID=sb", "SANDOX_NATS_URL=nats://x"}, nil},
		{"no disk limit", []string{"SANDOX_SANDBOX_ID=sb", "SANDOX_NATS_URL=nats://x", "SANDOX_DISK_BYTES=0"}, nil},
		{"nothing", nil, []string{"SANDOX_SANDBOX_ID is not set", "SANDOX_NATS_URL is not set"}},
		{"disk with a unit", []string{"SANDOX_SANDBOX_ID=sb", "SANDOX_NATS_URL=nats://x", "SANDOX_DISK_BYTES=64MiB"}, []string{`SANDOX_DISK_BYTES="64MiB"`}},
		{"negative disk", []string{"SANDOX_SANDBOX_ID=sb", "SANDOX_NATS_URL=nats://x", "SANDOX_DISK_BYTES=-1"}, []string{"SANDOX_DISK_BYTES"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e ExecutorEnv
			err := e.FromEnv(getenv(tt.environ))
			if len(tt.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestExecutorEnvFamiliesList(t *testing.T) {
	var e ExecutorEnv
	require.NoError(t, e.FromEnv(getenv([]string{"SANDOX_SANDBOX_ID=sb", "SANDOX_NATS_URL=n", "SANDOX_TOOL_FAMILIES= web_tools ,,filesystem_tools"})))
	assert.Equal(t, []string{"web_tools", "filesystem_tools"}, e.Families)
}
