package tools

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestRegistryAddLazy checks which uses of a registry load its lazy
// modules, that they load once, and what a failed load does.
func TestRegistryAddLazy(t *testing.T) {
	tests := []struct {
		name     string
		use      func(r *Registry) error
		wantLoad bool
	}{
		{"another module's tool", func(r *Registry) error { _, err := r.Resolve("go_tools.echo"); return err }, false},
		{"modules", func(r *Registry) error { r.Modules(); return nil }, false},
		{"string", func(r *Registry) error { _ = r.String(); return nil }, false},
		{"its module's tool", func(r *Registry) error { _, err := r.Resolve("py_tools.echo"); return err }, true},
		{"a bare name", func(r *Registry) error { _, err := r.Resolve("only_py"); return err }, true},
		{"describe", func(r *Registry) error { r.Describe(); return nil }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var loads atomic.Int32
			r := NewRegistry(echoTool("go_tools"))
			r.AddLazy([]string{"py_tools"}, func() ([]Tool, error) {
				loads.Add(1)
				return []Tool{echoTool("py_tools"), New("py_tools", "only_py", "Py only.", func(_ context.Context, a echoArgs) (Result, error) { return Result{}, nil })}, nil
			})
			assert.Equal(t, []string{"go_tools", "py_tools"}, r.Modules(), "declared before loading")
			require.NoError(t, tc.use(r))
			require.NoError(t, tc.use(r))
			want := int32(0)
			if tc.wantLoad {
				want = 1
			}
			assert.Equal(t, want, loads.Load(), "loads")
			assert.Equal(t, []string{"go_tools", "py_tools"}, r.Modules())
		})
	}
}

func TestRegistryAddLazyFailure(t *testing.T) {
	r := NewRegistry(echoTool("go_tools"))
	r.AddLazy([]string{"py_tools"}, func() ([]Tool, error) { return nil, errors.New("no python") })
	_, err := r.Resolve("py_tools.echo")
	var we *schemas.Error
	require.ErrorAs(t, err, &we)
	assert.Equal(t, schemas.CodeUnavailable, we.Code)
	assert.Contains(t, we.Message, "no python")
	_, err = r.Resolve("go_tools.echo")
	assert.NoError(t, err, "the other modules still resolve")
	assert.Len(t, r.Describe(), 1)
}
