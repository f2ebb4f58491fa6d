package schemas

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckToolRef refuses a tool reference that cannot be a tool name as
// written: one with a character other than a letter, a digit, '_' or '.'
// (a space, a tab, a line break, a non-breaking space, ...). Such a name is
// not mended behind the caller's back. The error is a *Error with
// CodeUnknownTool that quotes the name as received, names the first bad
// character and, when the name without its surrounding space would do,
// suggests it.
func CheckToolRef(ref string) error {
	for i, r := range ref {
		if r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			continue
		}
		what := "is not valid UTF-8"
		if r != utf8.RuneError {
			what = fmt.Sprintf("has %q (%U)", r, r)
		}
		msg := fmt.Sprintf("unknown tool %q: a tool name has only letters, digits, '_' and '.', and this one %s at byte %d", ref, what, i)
		if trimmed := strings.TrimSpace(ref); trimmed != ref && trimmed != "" && CheckToolRef(trimmed) == nil {
			msg += fmt.Sprintf("; did you mean %q?", trimmed)
		}
		return Errorf(CodeUnknownTool, "%s", msg)
	}
	return nil
}
