package sandboxes

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestBuildImage checks the image a create builds before it takes the
// group's lock: what Make would refuse is refused the same way before
// anything is built; a built image is reported built to the sandbox made
// with it, and found again by the next sandbox with the same tools.
func TestBuildImage(t *testing.T) {
	f := newFixture(t)
	g := f.group("g1", schemas.GroupSpec{Tools: []schemas.ToolFile{{Name: "group_tools.py", Content: []byte("def g() -> int:\n    return 1\n")}}})
	tools := []schemas.ToolFile{{Name: "greet.py", Content: []byte("def hello():\n    return 'hi'\n")}}

	refused := []struct {
		name string
		spec schemas.SandboxSpec
		code schemas.ErrorCode
	}{
		{"a bad id", schemas.SandboxSpec{ID: "no spaces", Tools: tools}, schemas.CodeBadRequest},
		{"a tool file that is not Python", schemas.SandboxSpec{ID: "sb-x", Tools: []schemas.ToolFile{{Name: "notes.txt", Content: []byte("x")}}}, schemas.CodeBadRequest},
		{"an unknown family", schemas.SandboxSpec{ID: "sb-x", Families: []string{"nope_tools"}}, schemas.CodeBadRequest},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.s.BuildImage(t.Context(), g, tt.spec)
			var se *schemas.Error
			require.True(t, errors.As(err, &se), "%v", err)
			assert.Equal(t, tt.code, se.Code)
			_, merr := f.s.Make(t.Context(), g, tt.spec, "cmd-"+tt.spec.ID)
			assert.Equal(t, err.Error(), merr.Error(), "Make refuses it with the same words")
			assert.Zero(t, f.rt.Builds())
		})
	}

	img, err := f.s.BuildImage(t.Context(), g, schemas.SandboxSpec{ID: "sb1", Tools: tools})
	require.NoError(t, err)
	assert.False(t, img.Reused)
	assert.Equal(t, 1, f.rt.Builds())
	st, err := f.s.MakeWithImage(t.Context(), g, schemas.SandboxSpec{ID: "sb1", Tools: tools}, "cmd-1", &img)
	require.NoError(t, err)
	assert.Equal(t, img.Ref, st.Image)
	assert.False(t, st.ImageReused, "the sandbox's image was built for it")
	assert.Equal(t, 1, f.rt.Builds(), "MakeWithImage builds nothing")

	again, err := f.s.BuildImage(t.Context(), g, schemas.SandboxSpec{ID: "sb2", Tools: tools})
	require.NoError(t, err)
	assert.Equal(t, img.Ref, again.Ref)
	assert.True(t, again.Reused)

	f.rt.SetFail(func(op, arg string) error {
		if op == "build" {
			return errors.New("no space left on device")
		}
		return nil
	})
	_, err = f.s.BuildImage(t.Context(), g, schemas.SandboxSpec{ID: "sb3", Tools: []schemas.ToolFile{{Name: "other.py", Content: []byte("X = 1\n")}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sandbox sb3")
	assert.Contains(t, err.Error(), "no space left on device")
}
