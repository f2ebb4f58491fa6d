package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

func qdrantBuilder(t *testing.T, noPull bool) *build.Builder {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	cfg := build.DefaultConfig(root)
	cfg.NoPull = noPull
	cfg.PullTimeout = time.Minute
	if testing.Verbose() {
		cfg.Progress = os.Stderr
	}
	return build.NewBuilder(env.docker, cfg)
}

// TestQdrantImageChoice checks Builder.Qdrant's two paths: the official
// image where the engine has or can pull it, the local qdrant-edge build
// otherwise (here, with no registry, the pull fails and it falls back).
func TestQdrantImageChoice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noPull bool
	}{
		{"try the registry first", false},
		{"never pull", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := qdrantBuilder(t, tc.noPull).Qdrant(t.Context())
			require.NoError(t, err)
			if img.Official {
				assert.Equal(t, build.QdrantOfficialImage, img.Ref)
				assert.Equal(t, "/qdrant/storage", img.DataDir)
				return
			}
			assert.True(t, strings.HasPrefix(img.Ref, build.QdrantEdgeRepo+":"), "got %s", img.Ref)
			assert.Equal(t, "/data", img.DataDir)
			assert.Equal(t, "6334/tcp", img.GRPCPort)
			_, err = env.docker.ImageID(t.Context(), build.QdrantEdgeImage)
			assert.NoError(t, err, "the build is also tagged latest")
		})
	}
}

// TestQdrantEdgeSelftest runs the service's own Python tests (services/
// qdrantedge/tests: the RPCs through the Python gRPC stubs, persistence,
// and optimisation in a child process while serving) inside its image.
func TestQdrantEdgeSelftest(t *testing.T) {
	ctx := t.Context()
	image, err := qdrantBuilder(t, true).QdrantEdge(ctx)
	require.NoError(t, err)
	id, err := env.docker.Create(ctx, docker.ContainerSpec{
		Name:     fmt.Sprintf("sandox-it-qdrant-selftest-%d", time.Now().UnixNano()),
		Image:    image,
		Labels:   map[string]string{runtime.LabelManaged: "true", "dev.sandox.test": "true"},
		Cmd:      []string{"selftest"},
		Hardened: true,
		Memory:   1 << 30,
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, env.docker.Remove(context.WithoutCancel(ctx), id)) })
	require.NoError(t, env.docker.Start(ctx, id))
	var st docker.State
	poll.Until(t, 5*time.Minute, "the selftest ends", func() bool {
		st, err = env.docker.Inspect(ctx, id)
		return err == nil && !st.Running
	})
	logs, err := env.docker.Logs(ctx, id, 200)
	require.NoError(t, err)
	t.Logf("selftest:\n%s", logs)
	assert.Equal(t, 0, st.ExitCode, "selftest exit code")
	assert.Contains(t, logs, "OK")
}
