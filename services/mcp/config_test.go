package mcp_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/mcp"
)

func TestParseGroupFile(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		wantGroup string
		wantTools []string
		wantSbMem string
		wantErr   bool
	}{
		{
			name:      "full",
			file:      `{"group":"agents","tools":["t.py","/abs/u.py"],"compute_resources":{"cpu":"1"},"sandbox":{"tools":["s.py"],"compute_resources":{"memory":"1GiB"}}}`,
			wantGroup: "agents", wantTools: []string{"/cfg/t.py", "/abs/u.py"}, wantSbMem: "1GiB",
		},
		{name: "empty object", file: `{}`},
		{name: "unknown field", file: `{"groups":"x"}`, wantErr: true},
		{name: "not JSON", file: `group: x`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, opts, err := mcp.ParseGroupFile(strings.NewReader(tt.file), "/cfg")
			if tt.wantErr {
				assert.ErrorIs(t, err, sdk.ErrBadRequest)
				return
			}
			require.NoError(t, err)
			if tt.wantGroup != "" {
				assert.Equal(t, tt.wantGroup, cfg.ID)
			} else {
				assert.Regexp(t, `^mcp-[0-9a-f]{8}$`, cfg.ID)
			}
			assert.Equal(t, len(tt.wantTools), len(cfg.Tools))
			if len(tt.wantTools) > 0 {
				assert.Equal(t, tt.wantTools, cfg.Tools)
				assert.Equal(t, []string{"/cfg/s.py"}, opts.Tools)
			}
			if tt.wantSbMem != "" {
				require.NotNil(t, opts.ComputeResources)
				assert.Equal(t, tt.wantSbMem, opts.ComputeResources.Memory)
			}
		})
	}
}
