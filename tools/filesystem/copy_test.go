package filesystem

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReplacingUndoesAFailedPlace(t *testing.T) {
	errPlace := errors.New("place failed")
	tests := []struct {
		name     string
		existing map[string]string // at dst before
		want     string            // content of dst/keep.txt after, "" for no dst
	}{
		{"new destination", nil, ""},
		{"directory put back", map[string]string{"dst/keep.txt": "kept"}, "kept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, tt.existing, 0)
			dst := fx.path("dst")
			err := replacing(dst, tt.existing != nil, tt.existing != nil, func() error {
				writeTree(t, fx.dir, map[string]string{"dst/partial.txt": "half"})
				return errPlace
			})
			require.ErrorIs(t, err, errPlace)
			checkMissing(t, fx.path("dst/partial.txt"))
			if tt.want == "" {
				checkMissing(t, dst)
				return
			}
			require.Equal(t, tt.want, readBack(t, fx.path("dst/keep.txt")))
			des, _ := os.ReadDir(fx.dir)
			require.Len(t, des, 1, "entries in the parent, want only dst (no moved-aside copy left)")
		})
	}
}
