package terminal

import (
	"strings"
	"testing"
)

func TestOutputBufferKeepsTheLatest(t *testing.T) {
	b := outputBuffer{limit: 100}
	for range 50 {
		b.write([]byte("0123456789"))
	}
	if b.end() != 500 {
		t.Fatalf("got end %d, want 500", b.end())
	}
	if kept := b.end() - b.start(); kept < 100 || kept > 125 {
		t.Fatalf("got %d bytes kept, want 100 to 125", kept)
	}
	if got := string(b.bytes(490, 500)); got != "0123456789" {
		t.Fatalf("got %q, want the last write", got)
	}
	v := b.summary(0, b.end(), viewOptions{max: 1000})
	if len(v.notes) != 1 || !strings.Contains(v.notes[0], "dropped") {
		t.Fatalf("got notes %q, want one saying old output was dropped", v.notes)
	}
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
			if got := strings.Contains(v.text, "bytes truncated"); got != tt.truncated {
				t.Fatalf("got truncated %v, want %v: %q", got, tt.truncated, v.text)
			}
			if v.next != b.end() {
				t.Fatalf("got next %d, want %d", v.next, b.end())
			}
			for _, line := range strings.Split(strings.TrimSuffix(v.text, "\n"), "\n") {
				if len(line) != 10 && !strings.HasPrefix(line, "[... ") {
					t.Fatalf("got line %q, want whole lines only", line)
				}
			}
		})
	}
}

func TestPage(t *testing.T) {
	b := outputBuffer{limit: 1 << 20}
	b.write([]byte("aaaa\nbbbb\ncccc\n"))
	v := b.page(5, viewOptions{max: 7})
	if v.text != "bbbb\n" || v.next != 10 {
		t.Fatalf("got %q next %d, want %q next 10", v.text, v.next, "bbbb\n")
	}
	if len(v.notes) != 1 || !strings.Contains(v.notes[0], "offset=10") {
		t.Fatalf("got notes %q, want the next offset", v.notes)
	}
	v = b.page(10, viewOptions{max: 100})
	if v.text != "cccc\n" || len(v.notes) != 0 {
		t.Fatalf("got %q, %q; want the last line and no note", v.text, v.notes)
	}
}
