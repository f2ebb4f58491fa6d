package terminal

import (
	"fmt"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// keyNames maps the key names send_keys accepts (lower case) to the bytes a
// terminal sends for them.
var keyNames = map[string]string{
	"enter":     "\r",
	"return":    "\r",
	"tab":       "\t",
	"escape":    "\x1b",
	"esc":       "\x1b",
	"space":     " ",
	"backspace": "\x7f",
	"up":        "\x1b[A",
	"down":      "\x1b[B",
	"right":     "\x1b[C",
	"left":      "\x1b[D",
	"home":      "\x1b[H",
	"end":       "\x1b[F",
	"delete":    "\x1b[3~",
	"pageup":    "\x1b[5~",
	"pagedown":  "\x1b[6~",
}

// keyList is the documented list of named keys.
const keyList = "Enter, Tab, Escape, Space, Backspace, Up, Down, Left, Right, Home, End, Delete, PageUp, PageDown, Ctrl-A … Ctrl-Z (Ctrl-C interrupts, Ctrl-D is end of input, Ctrl-Z suspends)"

// keyBytes translates key names to the bytes to write. A name is one of
// keyNames, "Ctrl-X" (also "C-x" or "^X") for a letter X, or a single
// character sent as it is. Names are not case-sensitive. An unknown name is
// an error wrapping schemas.CodeInvalidArgs.
func keyBytes(keys []string) ([]byte, error) {
	var out []byte
	for _, k := range keys {
		b, ok := keyByte(k)
		if !ok {
			return nil, fmt.Errorf("%w: unknown key %q; keys are %s, or a single character", schemas.CodeInvalidArgs, k, keyList)
		}
		out = append(out, b...)
	}
	return out, nil
}

func keyByte(k string) (string, bool) {
	if len([]rune(k)) == 1 {
		return k, true
	}
	name := strings.ToLower(strings.TrimSpace(k))
	if b, ok := keyNames[name]; ok {
		return b, true
	}
	for _, prefix := range []string{"ctrl-", "ctrl+", "control-", "c-", "^"} {
		rest, ok := strings.CutPrefix(name, prefix)
		if ok && len(rest) == 1 && rest[0] >= 'a' && rest[0] <= 'z' {
			return string(rune(rest[0] - 'a' + 1)), true
		}
	}
	return "", false
}
