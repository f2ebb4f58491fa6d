package integration

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// TestRuntimeNotFound asks the real engine for a container and an image
// it does not have, through the Docker client and through the
// orchestrator's runtime over it: every answer is runtime.ErrNotFound,
// which is schemas.CodeNotFound, the one not-found class, with the object
// it looked for in the message.
func TestRuntimeNotFound(t *testing.T) {
	ctx := t.Context()
	rt := docker.NewRuntime(env.docker)
	container := fmt.Sprintf("sandox-it-missing-%d", os.Getpid())
	image := fmt.Sprintf("sandox/it-missing:%d", os.Getpid())
	call := func(_ any, err error) error { return err }
	tests := []struct {
		name string
		err  error
	}{
		{"client inspect", call(env.docker.Inspect(ctx, container))},
		{"client newest tag", call(env.docker.NewestTag(ctx, "sandox/it-missing"))},
		{"runtime inspect", call(rt.Inspect(ctx, container))},
		{"runtime start", rt.Start(ctx, container)},
		{"runtime update", rt.Update(ctx, container, runtime.ResourceLimits{NanoCPUs: 1e9})},
		{"runtime stats", call(rt.Stats(ctx, container))},
		{"runtime image id", call(rt.ImageID(ctx, image))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, tt.err, runtime.ErrNotFound)
			assert.ErrorIs(t, tt.err, schemas.CodeNotFound)
			assert.ErrorContains(t, tt.err, "not found")
		})
	}
}
