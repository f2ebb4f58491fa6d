package terminal

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMarkerParser(t *testing.T) {
	const nonce = "N0NCE"
	tests := []struct {
		name, stream, want string
	}{
		{"plain output", "hello\r\nworld", "hello\r\nworld"},
		{"start and end", "\x1esandox:N0NCE:3:start\r\nout\r\n\x1esandox:N0NCE:3:end:0\r\n", "<start 3>out\r\n<end 3 0>"},
		{"end after output without newline", "abc\x1esandox:N0NCE:1:end:130\n", "abc<end 1 130>"},
		{"ready", "\x1esandox:N0NCE:0:ready\n", "<ready>"},
		{"another nonce is output", "\x1esandox:OTHER:1:end:0\n", "\x1esandox:OTHER:1:end:0\n"},
		{"record separator in output", "a\x1eb\n", "a\x1eb\n"},
		{"malformed marker is output", "\x1esandox:N0NCE:x:end:0\n", "\x1esandox:N0NCE:x:end:0\n"},
		{"unknown event is output", "\x1esandox:N0NCE:1:boom\n", "\x1esandox:N0NCE:1:boom\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// feed the stream whole and split at every byte: the same result
			for split := 0; split <= len(tt.stream); split++ {
				p := newMarkerParser(nonce)
				var got strings.Builder
				for _, part := range []string{tt.stream[:split], tt.stream[split:]} {
					for _, pc := range p.feed([]byte(part)) {
						got.WriteString(showPiece(pc))
					}
				}
				require.Equal(t, tt.want, got.String(), "split at %d", split)
			}
		})
	}
}

func TestMarkerParserHoldsBackOnlyShortPartials(t *testing.T) {
	p := newMarkerParser("N")
	pieces := p.feed([]byte("x\x1esandox:N:1:st"))
	require.Len(t, pieces, 1, "want only x before the partial marker")
	require.Equal(t, "x", string(pieces[0].text), "want only x before the partial marker")
	long := "\x1esandox:N:" + strings.Repeat("9", maxMarkerLen)
	var got strings.Builder
	for _, pc := range newMarkerParser("N").feed([]byte(long)) {
		got.WriteString(showPiece(pc))
	}
	require.Equal(t, long, got.String(), "want a too long partial passed as output")
}

func showPiece(p piece) string {
	if p.mark == nil {
		return string(p.text)
	}
	switch p.mark.kind {
	case markReady:
		return "<ready>"
	case markStart:
		return fmt.Sprintf("<start %d>", p.mark.seq)
	default:
		return fmt.Sprintf("<end %d %d>", p.mark.seq, p.mark.status)
	}
}

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain/path-1.txt", "plain/path-1.txt"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"$HOME", "'$HOME'"},
		{"a\nb", "'a\nb'"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			require.Equal(t, tt.want, shellQuote(tt.in))
		})
	}
}
