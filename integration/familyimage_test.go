package integration

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/tools/catalog"
)

// TestFamilyImageNeeds builds the Dockerfile the orchestrator generates for
// a family that needs an apt package and a file, and checks both are in the
// image: apt inside the build reaches the mirror the base image names, and
// the image still runs as the sandbox user.
func TestFamilyImageNeeds(t *testing.T) {
	// An image of its own tag: it runs beside the other parallel tests
	// (doc.go).
	t.Parallel()
	ctx := t.Context()
	needs := catalog.ImageNeeds{
		Apt:   []string{"jq"},
		Files: []catalog.ImageFile{{Path: "/usr/local/bin/family-hello", Content: []byte("#!/bin/sh\necho family says hello\n"), Mode: 0o755}},
	}
	files := images.BuildContext(build.SandboxImage, needs, []schemas.ToolFile{{Name: "fam_tools.py", Content: []byte(familyTools)}})
	tag := "sandox/sandbox-tools:it-family-needs"
	var progress strings.Builder
	err := env.docker.Build(ctx, docker.BuildSpec{Tag: tag, Files: files, Labels: map[string]string{runtime.LabelManaged: "true"}}, &progress)
	require.NoError(t, err, "build:\n%s", progress.String())
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() })

	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(context.WithoutCancel(ctx), "docker", append([]string{"run", "--rm", "--entrypoint", "/bin/sh", tag, "-c"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	assert.Contains(t, run("jq --version"), "jq-")
	assert.Equal(t, "family says hello\n", run("family-hello"))
	assert.Equal(t, "10001\n", run("id -u"))
	assert.Contains(t, run("cat /opt/sandox/tools/fam_tools.py"), "def hello")
}
