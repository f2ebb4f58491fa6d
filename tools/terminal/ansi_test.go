package terminal

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlainText(t *testing.T) {
	tests := []struct {
		name, in, want string
		more           bool
		wantUsed       int // -1: all of in
	}{
		{"plain", "hello\nworld", "hello\nworld", false, -1},
		{"crlf", "a\r\nb\r\n", "a\nb\n", false, -1},
		{"sgr colours", "\x1b[1;31mred\x1b[0m", "red", false, -1},
		{"private mode", "\x1b[?2004hx\x1b[?2004l", "x", false, -1},
		{"osc with bel", "\x1b]0;title\x07text", "text", false, -1},
		{"osc with st", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link", false, -1},
		{"charset designation", "\x1b(Bok", "ok", false, -1},
		{"carriage return overwrites", "abcdef\rXY\n", "XYcdef\n", false, -1},
		{"progress bar", "10%\r20%\r100%\n", "100%\n", false, -1},
		{"erase line after return", "50% done\r\x1b[K5%\n", "5%\n", false, -1},
		{"erase whole line", "junk\x1b[2K\rok\n", "ok\n", false, -1},
		{"cursor to column", "abcd\x1b[2GX\n", "aXcd\n", false, -1},
		{"cursor back and forward", "abc\x1b[2DX\x1b[CY\n", "aXcY\n", false, -1},
		{"backspace", "ab\bX\n", "aX\n", false, -1},
		{"bell and other controls dropped", "a\x07b\x00c\x0ed\n", "abcd\n", false, -1},
		{"tab kept", "a\tb", "a\tb", false, -1},
		{"utf-8", "héllo ✓", "héllo ✓", false, -1},
		{"cut escape held back", "ok\x1b[3", "ok", true, 2},
		{"cut escape at the end dropped", "ok\x1b[3", "ok", false, -1},
		{"cut utf-8 held back", "ok\xe2\x9c", "ok", true, 2},
		{"invalid utf-8 replaced", "a\xffb", "a\uFFFDb", false, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, used := plainText([]byte(tt.in), tt.more)
			require.Equal(t, tt.want, got)
			want := tt.wantUsed
			if want < 0 {
				want = len(tt.in)
			}
			require.Equal(t, want, used, "bytes used")
		})
	}
}

func TestRawText(t *testing.T) {
	got, used := rawText([]byte("\x1b[31mr\xe2\x9c"), true)
	require.Equal(t, "\x1b[31mr", got, "want the escape kept and the cut rune held back")
	require.Equal(t, 6, used, "bytes used: want the cut rune held back")
}
