package filesystem

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWalksStopWhenCancelled(t *testing.T) {
	fx := newFixture(t, findTree, 0)
	tests := []struct {
		tool string
		args args
	}{
		{"find_files", args{"pattern": "*.go"}},
		{"search_files", args{"pattern": "x"}},
		{"list_directory", args{"depth": 3}},
		{"copy_path", args{"source": "src", "destination": "copy"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			raw, err := json.Marshal(tt.args)
			require.NoError(t, err)
			_, err = fx.tools[tt.tool].Call(ctx, raw)
			require.ErrorIs(t, err, context.Canceled, "want context.Canceled")
		})
	}
	checkMissing(t, fx.path("copy"))
}
