package terminal

import (
	"strings"
	"unicode/utf8"
)

// plainText renders raw terminal output as the plain text a person would
// read on the screen, line by line: CSI, OSC and other escape sequences are
// removed, "\r\n" becomes "\n", a lone "\r" returns to the start of the line
// so that what follows overwrites it (progress bars keep their last state),
// backspace moves one column left, and the cursor movements and line erasing
// that progress bars use (CSI C, D, G, K) are applied to the current line.
// Other control characters except tab and newline are dropped.
//
// When more is true the output may go on, and an escape sequence or UTF-8
// character cut off at the end of raw is left for the next call: plainText
// returns how many bytes of raw it consumed.
func plainText(raw []byte, more bool) (string, int) {
	var out strings.Builder
	var line lineBuffer
	i := 0
	for i < len(raw) {
		c := raw[i]
		switch {
		case c == 0x1b:
			n, ok := escapeLen(raw[i:])
			if !ok {
				if more {
					out.WriteString(line.String())
					return out.String(), i
				}
				n = len(raw) - i // drop an unterminated sequence at the very end
			}
			line.escape(raw[i : i+n])
			i += n
			continue
		case c == '\n':
			out.WriteString(line.String())
			out.WriteByte('\n')
			line.reset()
		case c == '\r':
			line.col = 0
		case c == '\b':
			line.col = max(line.col-1, 0)
		case c == '\t':
			line.put('\t')
		case c < 0x20 || c == 0x7f:
			// other control characters have no place in text
		case c < utf8.RuneSelf:
			line.put(rune(c))
		default:
			if more && !utf8.FullRune(raw[i:]) {
				out.WriteString(line.String())
				return out.String(), i
			}
			r, n := utf8.DecodeRune(raw[i:])
			line.put(r)
			i += n
			continue
		}
		i++
	}
	out.WriteString(line.String())
	return out.String(), len(raw)
}

// rawText returns raw as valid UTF-8 without touching escape sequences. With
// more it holds back a UTF-8 character cut off at the end.
func rawText(raw []byte, more bool) (string, int) {
	n := len(raw)
	if more {
		for k := 1; k <= utf8.UTFMax && k <= n; k++ {
			if utf8.RuneStart(raw[n-k]) {
				if !utf8.FullRune(raw[n-k:]) {
					n -= k
				}
				break
			}
		}
	}
	return strings.ToValidUTF8(string(raw[:n]), "\uFFFD"), n
}

// escapeLen returns the length of the escape sequence at the start of b
// (b[0] is ESC), and false when b ends before the sequence does.
func escapeLen(b []byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	switch b[1] {
	case '[': // CSI: parameters and intermediates, then a final byte
		for j := 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				return j + 1, true
			}
			if b[j] < 0x20 || b[j] > 0x3f {
				return j, true // malformed: drop what there is
			}
		}
		return 0, false
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: up to BEL or ESC \
		for j := 2; j < len(b); j++ {
			if b[j] == 0x07 {
				return j + 1, true
			}
			if b[j] == 0x1b {
				if j+1 >= len(b) {
					return 0, false
				}
				if b[j+1] == '\\' {
					return j + 2, true
				}
				return j, true // another escape starts: end this string here
			}
		}
		return 0, false
	default: // ESC, intermediates, a final byte (ESC ( B, ESC =, ESC 7 …)
		for j := 1; j < len(b); j++ {
			if b[j] < 0x20 || b[j] > 0x2f {
				return j + 1, true
			}
		}
		return 0, false
	}
}

// lineBuffer is the current screen line with a cursor.
type lineBuffer struct {
	cells []rune
	col   int
}

func (l *lineBuffer) put(r rune) {
	for len(l.cells) < l.col {
		l.cells = append(l.cells, ' ')
	}
	if l.col < len(l.cells) {
		l.cells[l.col] = r
	} else {
		l.cells = append(l.cells, r)
	}
	l.col++
}

func (l *lineBuffer) reset() {
	l.cells = l.cells[:0]
	l.col = 0
}

func (l *lineBuffer) String() string { return string(l.cells) }

// escape applies the CSI sequences that move within a line or erase it;
// every other sequence is dropped.
func (l *lineBuffer) escape(seq []byte) {
	if len(seq) < 3 || seq[1] != '[' {
		return
	}
	final := seq[len(seq)-1]
	n := csiParam(seq[2 : len(seq)-1])
	switch final {
	case 'K': // erase in line
		switch n {
		case 0:
			if l.col < len(l.cells) {
				l.cells = l.cells[:l.col]
			}
		case 1:
			for j := 0; j < l.col && j < len(l.cells); j++ {
				l.cells[j] = ' '
			}
		case 2:
			l.cells = l.cells[:0]
		}
	case 'C': // cursor forward
		l.col += max(n, 1)
	case 'D': // cursor back
		l.col = max(l.col-max(n, 1), 0)
	case 'G': // cursor to column
		l.col = max(n, 1) - 1
	}
}

// csiParam reads the first numeric parameter of a CSI sequence; 0 when there
// is none.
func csiParam(p []byte) int {
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
		if n > 10000 {
			return 10000
		}
	}
	return n
}
