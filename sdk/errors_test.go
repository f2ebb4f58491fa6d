package sdk_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// TestErrorCodesMapToSentinels checks every wire code an SDK call can
// return against its sentinel.
func TestErrorCodesMapToSentinels(t *testing.T) {
	sentinels := []error{
		sdk.ErrBadRequest, sdk.ErrNotFound, sdk.ErrAlreadyExists, sdk.ErrConflict, sdk.ErrTimeout,
		sdk.ErrAccessDenied, sdk.ErrResourceExhausted, sdk.ErrUnsupported, sdk.ErrUnavailable, sdk.ErrInternal, sdk.ErrPaused,
	}
	tests := []struct {
		code schemas.ErrorCode
		want error // nil: no sentinel (the code appears only in observations)
	}{
		{schemas.CodeBadRequest, sdk.ErrBadRequest},
		{schemas.CodeInvalidArgs, sdk.ErrBadRequest},
		{schemas.CodeUnknownTool, sdk.ErrBadRequest},
		{schemas.CodeAmbiguousTool, sdk.ErrBadRequest},
		{schemas.CodeNotFound, sdk.ErrNotFound},
		{schemas.CodeAlreadyExists, sdk.ErrAlreadyExists},
		{schemas.CodeConflict, sdk.ErrConflict},
		{schemas.CodeTimeout, sdk.ErrTimeout},
		{schemas.CodeAccessDenied, sdk.ErrAccessDenied},
		{schemas.CodeResourceExhausted, sdk.ErrResourceExhausted},
		{schemas.CodeUnsupported, sdk.ErrUnsupported},
		{schemas.CodeUnavailable, sdk.ErrUnavailable},
		{schemas.CodeInternal, sdk.ErrInternal},
		{schemas.CodeToolError, nil},
		{schemas.CodeSkipped, nil},
		{schemas.CodePaused, sdk.ErrPaused},
	}
	require.Len(t, tests, len(schemas.ErrorCodes), "a new code needs a row")
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			err := &sdk.Error{Code: tt.code, Message: "m"}
			assert.Equal(t, string(tt.code)+": m", err.Error())
			for _, s := range sentinels {
				assert.Equal(t, s == tt.want, errors.Is(err, s), "errors.Is(%s, %v)", tt.code, s)
			}
		})
	}
}

// TestRefusals checks that the orchestrator's refusals reach the caller as
// the right sentinel.
func TestRefusals(t *testing.T) {
	s := startSandox(t)
	ctx := t.Context()
	g := s.newGroup(t, sdk.GroupConfig{ID: "refuse"})
	require.NoError(t, g.Start(ctx))
	_, err := g.CreateSandbox(ctx, "refuse-a", sdk.SandboxOptions{})
	require.NoError(t, err)

	tests := []struct {
		name string
		call func() error
		want error
	}{
		{name: "group id taken", want: sdk.ErrAlreadyExists, call: func() error {
			return s.newGroup(t, sdk.GroupConfig{ID: "refuse"}).Start(ctx)
		}},
		{name: "sandbox id taken", want: sdk.ErrAlreadyExists, call: func() error {
			_, err := g.CreateSandbox(ctx, "refuse-a", sdk.SandboxOptions{})
			return err
		}},
		{name: "start a sandbox that does not exist", want: sdk.ErrNotFound, call: func() error {
			return g.Attach("refuse-nope").Start(ctx)
		}},
		{name: "end a sandbox that does not exist", want: sdk.ErrNotFound, call: func() error {
			return g.Attach("refuse-nope").End(ctx)
		}},
		{name: "stats of a sandbox that is not running", want: sdk.ErrConflict, call: func() error {
			_, err := g.Sandbox("refuse-a").Stats(ctx)
			return err
		}},
		{name: "stats of a sandbox that does not exist", want: sdk.ErrNotFound, call: func() error {
			_, err := g.Attach("refuse-nope").Stats(ctx)
			return err
		}},
		{name: "more memory than the host has", want: sdk.ErrResourceExhausted, call: func() error {
			_, err := g.CreateSandbox(ctx, "refuse-big", sdk.SandboxOptions{ComputeResources: &schemas.ComputeResources{Memory: "64GiB"}})
			return err
		}},
		{name: "a disk limit without disks", want: sdk.ErrUnsupported, call: func() error {
			_, err := g.CreateSandbox(ctx, "refuse-disk", sdk.SandboxOptions{ComputeResources: &schemas.ComputeResources{Disk: "1GiB"}})
			return err
		}},
		{name: "a tool file name that is no module name", want: sdk.ErrBadRequest, call: func() error {
			bad := filepath.Join(t.TempDir(), "my-tools.py")
			require.NoError(t, os.WriteFile(bad, []byte("x = 1\n"), 0o644))
			_, err := g.CreateSandbox(ctx, "refuse-file", sdk.SandboxOptions{Tools: []string{bad}})
			return err
		}},
		{name: "an empty batch", want: sdk.ErrBadRequest, call: func() error {
			_, err := g.Sandbox("refuse-a").SendActions(ctx, nil)
			return err
		}},
		{name: "a malformed payload", want: sdk.ErrBadRequest, call: func() error {
			_, err := g.Sandbox("refuse-a").SendActionsJSON(ctx, []byte(`{"terminal_tools.run": `))
			return err
		}},
		{name: "a bad sandbox id", want: sdk.ErrBadRequest, call: func() error {
			_, err := g.CreateSandbox(ctx, "no spaces", sdk.SandboxOptions{})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			require.ErrorIs(t, err, tt.want)
		})
	}
}

// TestConfigErrors checks what NewSandboxGroup refuses before it contacts
// anything, and a NATS server that is not there.
func TestConfigErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.py")
	tests := []struct {
		name string
		cfg  sdk.GroupConfig
		opts []sdk.Option
	}{
		{name: "bad group id", cfg: sdk.GroupConfig{ID: "a b"}},
		{name: "missing tool file", cfg: sdk.GroupConfig{ID: "g", Tools: []string{missing}}},
		{name: "missing population config", cfg: sdk.GroupConfig{ID: "g", PopulationConfig: missing}},
		{name: "bad compute", cfg: sdk.GroupConfig{ID: "g", ComputeResources: schemas.ComputeResources{CPU: "lots"}}},
		{name: "bad initial sandbox", cfg: sdk.GroupConfig{ID: "g", Sandboxes: []sdk.InitialSandbox{{ID: "-x"}}}},
		{name: "an outside package index under none", cfg: sdk.GroupConfig{ID: "g", Egress: &schemas.Egress{Policy: schemas.EgressNone, PackageIndex: "https://pypi.org/simple"}}},
		{name: "a relative package index", cfg: sdk.GroupConfig{ID: "g", Egress: &schemas.Egress{Policy: schemas.EgressOpen, PackageIndex: "wheels"}}},
		{name: "empty URL", cfg: sdk.GroupConfig{ID: "g"}, opts: []sdk.Option{sdk.WithURL("")}},
		{name: "nil connection", cfg: sdk.GroupConfig{ID: "g"}, opts: []sdk.Option{sdk.WithConn(nil)}},
		{name: "zero command timeout", cfg: sdk.GroupConfig{ID: "g"}, opts: []sdk.Option{sdk.WithCommandTimeout(0)}},
		{name: "negative action timeout", cfg: sdk.GroupConfig{ID: "g"}, opts: []sdk.Option{sdk.WithActionTimeout(-time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sdk.NewSandboxGroup(tt.cfg, tt.opts...)
			require.ErrorIs(t, err, sdk.ErrBadRequest)
		})
	}

	t.Run("no NATS server", func(t *testing.T) {
		g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "g"}, sdk.WithURL("nats://127.0.0.1:1"), sdk.WithCredentials(""))
		require.NoError(t, err)
		err = g.Start(t.Context())
		require.ErrorIs(t, err, sdk.ErrUnavailable)
	})
}
