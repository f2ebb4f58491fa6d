package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// memBuilds is an in-memory runtime.Images: images by tag, and a build
// that tags its image (or fails with err).
type memBuilds struct {
	mu     sync.Mutex
	images map[string]string
	builds []runtime.ImageBuild
	err    error
}

func (m *memBuilds) ImageID(_ context.Context, ref string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.images[ref]
	if !ok {
		return "", fmt.Errorf("image %s: %w", ref, runtime.ErrNotFound)
	}
	return id, nil
}

func (m *memBuilds) Build(_ context.Context, spec runtime.ImageBuild, _ io.Writer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.builds = append(m.builds, spec)
	m.images[spec.Tag] = fmt.Sprintf("id-%d", len(m.builds))
	return nil
}

// TestSandboxImage checks that a sandbox without tool files or families
// that need packages runs the default image, that one with tool files gets
// an image built once and reused, and the errors of a missing default
// image, an unknown family and a failed build.
func TestSandboxImage(t *testing.T) {
	const base = "sandox/sandbox:latest"
	files := []schemas.ToolFile{{Name: "my_tools.py", Content: []byte("def f(): pass\n")}}
	rt := &memBuilds{images: map[string]string{base: "id-base"}}
	b := NewBuilder(rt, base)
	ctx := t.Context()

	ref, reused, err := b.SandboxImage(ctx, []string{"filesystem_tools"}, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, base, ref)
	assert.True(t, reused)

	ref, reused, err = b.SandboxImage(ctx, []string{"filesystem_tools"}, files, io.Discard)
	require.NoError(t, err)
	assert.False(t, reused, "the first sandbox with these files builds")
	assert.Regexp(t, "^"+ToolsImageRepo+":[0-9a-f]{20}$", ref)
	require.Len(t, rt.builds, 1)
	assert.Equal(t, map[string]string{runtime.LabelManaged: "true", runtime.LabelContextHash: ref}, rt.builds[0].Labels)
	assert.Equal(t, files[0].Content, rt.builds[0].Files["tools/my_tools.py"])

	again, reused, err := b.SandboxImage(ctx, []string{"filesystem_tools"}, files, nil)
	require.NoError(t, err)
	assert.Equal(t, ref, again)
	assert.True(t, reused, "the same files reuse the image")
	assert.Len(t, rt.builds, 1)

	_, _, err = b.SandboxImage(ctx, []string{"no_such_tools"}, nil, nil)
	assert.ErrorContains(t, err, "no_such_tools")

	other := []schemas.ToolFile{{Name: "other_tools.py", Content: []byte("x = 1\n")}}
	rt.err = errors.New("disk full")
	_, _, err = b.SandboxImage(ctx, nil, other, nil)
	assert.Equal(t, schemas.CodeInternal, codeOf(err))
	assert.ErrorContains(t, err, "disk full")

	_, _, err = NewBuilder(rt, "sandox/missing:latest").SandboxImage(ctx, nil, files, nil)
	assert.Equal(t, schemas.CodeUnavailable, codeOf(err))
	assert.ErrorContains(t, err, "sandox up")
}

func codeOf(err error) schemas.ErrorCode {
	var se *schemas.Error
	if errors.As(err, &se) {
		return se.Code
	}
	return ""
}
