package integration

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// TestImageStore checks image garbage collection's view of a real engine:
// a sandbox-tools image is listed with its build time, the engine refuses
// to remove it while a container uses it (ErrInUse), and removes it once
// the container is gone.
func TestImageStore(t *testing.T) {
	ctx := t.Context()
	tag := fmt.Sprintf("%s:it-gc-%d", images.ToolsImageRepo, os.Getpid())
	files := map[string][]byte{"Dockerfile": []byte("FROM " + build.SandboxImage + "\nLABEL dev.sandox.test=gc\n")}
	var progress strings.Builder
	require.NoError(t, env.docker.Build(ctx, docker.BuildSpec{Tag: tag, Files: files, Labels: map[string]string{runtime.LabelManaged: "true"}}, &progress), "build:\n%s", progress.String())
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() })
	name := fmt.Sprintf("sandox-it-gc-%d", os.Getpid())
	out, err := exec.CommandContext(ctx, "docker", "create", "--name", name, tag).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", name).Run() })

	rt := docker.NewRuntime(env.docker)
	images, err := rt.ListImages(ctx, images.ToolsImageRepo)
	require.NoError(t, err)
	i := slices.IndexFunc(images, func(img runtime.Image) bool { return slices.Contains(img.Tags, tag) })
	require.GreaterOrEqual(t, i, 0, "%s listed", tag)
	img := images[i]
	assert.False(t, img.Created.IsZero(), "build time known")

	require.ErrorIs(t, rt.RemoveImage(ctx, img.ID), runtime.ErrInUse)
	out, err = exec.CommandContext(ctx, "docker", "rm", name).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, rt.RemoveImage(ctx, img.ID))
	require.ErrorIs(t, rt.RemoveImage(ctx, img.ID), runtime.ErrNotFound)
}
