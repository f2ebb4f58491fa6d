package terminal

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOutputBufferKeepsTheLatest(t *testing.T) {
	b := outputBuffer{limit: 100}
	for range 50 {
		b.write([]byte("0123456789"))
	}
	require.Equal(t, int64(500), b.end(), "end")
	kept := b.end() - b.start()
	require.GreaterOrEqual(t, kept, int64(100), "bytes kept, want 100 to 125")
	require.LessOrEqual(t, kept, int64(125), "bytes kept, want 100 to 125")
	require.Equal(t, "0123456789", string(b.bytes(490, 500)), "want the last write")
	v := b.summary(0, b.end(), viewOptions{max: 1000})
	require.Len(t, v.notes, 1, "notes, want one saying old output was dropped")
	require.Contains(t, v.notes[0], "dropped")
}

func TestSummary(t *testing.T) {
	var lines strings.Builder
	for i := range 100 {
		lines.WriteString(strings.Repeat("x", 9) + string(rune('a'+i%26)) + "\n")
	}
	b := outputBuffer{limit: 1 << 20}
	b.write([]byte(lines.String()))
	tests := []struct {
		name      string
		max       int
		truncated bool
	}{
		{"fits", 2000, false},
		{"truncated", 200, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := b.summary(0, b.end(), viewOptions{max: tt.max})
			require.Equal(t, tt.truncated, strings.Contains(v.text, "bytes truncated"), "truncated: %q", v.text)
			require.Equal(t, b.end(), v.next, "next")
			for _, line := range strings.Split(strings.TrimSuffix(v.text, "\n"), "\n") {
				require.True(t, len(line) == 10 || strings.HasPrefix(line, "[... "), "line %q, want whole lines only", line)
			}
		})
	}
}

func TestPage(t *testing.T) {
	b := outputBuffer{limit: 1 << 20}
	b.write([]byte("aaaa\nbbbb\ncccc\n"))
	v := b.page(5, viewOptions{max: 7})
	require.Equal(t, "bbbb\n", v.text)
	require.Equal(t, int64(10), v.next)
	require.Len(t, v.notes, 1, "notes, want the next offset")
	require.Contains(t, v.notes[0], "offset=10")
	v = b.page(10, viewOptions{max: 100})
	require.Equal(t, "cccc\n", v.text, "want the last line")
	require.Empty(t, v.notes, "want no note")
}
