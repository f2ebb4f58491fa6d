package resources

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCPUSet(t *testing.T) {
	tests := []struct {
		name, in string
		want     []int
		wantErr  string
	}{
		{"one core", "3", []int{3}, ""},
		{"range and core", "0-1,3", []int{0, 1, 3}, ""},
		{"unsorted and overlapping", "5,0-2,1-3,5", []int{0, 1, 2, 3, 5}, ""},
		{"spaces", " 0 - 1 , 3 ", []int{0, 1, 3}, ""},
		{"one-core range", "2-2", []int{2}, ""},
		{"largest core", "8191", []int{8191}, ""},
		{"empty element", "0,,1", nil, "empty element"},
		{"trailing comma", "0,", nil, "empty element"},
		{"backwards", "3-1", nil, `range "3-1" runs backwards`},
		{"open range", "1-", nil, `"" is not a core number`},
		{"negative", "-1", nil, `"" is not a core number`},
		{"letters", "a", nil, `"a" is not a core number`},
		{"stride syntax", "0-7:2/4", nil, `"7:2/4" is not a core number`},
		{"too large", "8192", nil, "core 8192 is above 8191"},
		{"overflow", "99999999999999999999", nil, "is above 8191"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCPUSet(tt.in)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr, "%q: got %v", tt.in, got)
				return
			}
			require.NoError(t, err, "%q", tt.in)
			assert.Equal(t, tt.want, got, "%q", tt.in)
		})
	}
}

func TestFormatCPUSet(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{3}, "3"},
		{[]int{0, 1, 3}, "0-1,3"},
		{[]int{0, 1, 2, 3, 5, 7, 8}, "0-3,5,7-8"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, formatCPUSet(tt.in), "formatCPUSet(%v)", tt.in)
		})
	}
}

// FuzzParseCPUSet checks that parseCPUSet never panics and that what it
// accepts is sorted, without duplicates, and written back the same way.
func FuzzParseCPUSet(f *testing.F) {
	for _, s := range []string{"0-1,3", "5,0-2", "8191", "3-1", "0,,1", "a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cores, err := parseCPUSet(s)
		if err != nil {
			return
		}
		require.NotEmpty(t, cores, "%q: got no cores and no error", s)
		for i := 1; i < len(cores); i++ {
			require.Greater(t, cores[i], cores[i-1], "%q: got %v, want strictly increasing", s, cores)
		}
		again, err := parseCPUSet(formatCPUSet(cores))
		require.NoError(t, err, "%q: written as %q", s, formatCPUSet(cores))
		require.Equal(t, cores, again, "%q: written as %q", s, formatCPUSet(cores))
	})
}
