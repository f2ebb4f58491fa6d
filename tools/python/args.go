package python

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/sandox/sandox/schemas"
)

// The limits on a call's arguments, checked before they reach the host:
// past them Python's json module fails to read the request, which would
// cost the host (and every module's state) its life. docs/tools/python.md
// lists them.
const (
	// MaxArgsDepth bounds the nesting of objects and arrays in the
	// arguments, the arguments object itself counting as 1. Python's json
	// module recurses once per level and stops near 1,000.
	MaxArgsDepth = 100
	// MaxNumberDigits bounds a run of digits in a number: Python refuses to
	// read an integer of more than 4,300 digits.
	MaxNumberDigits = 4300
)

// objectArgs checks that raw is a JSON object within the limits above, in
// valid UTF-8; empty and null mean {}. The error wraps schemas.CodeInvalidArgs.
func objectArgs(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return nil, fmt.Errorf("%w: args must be a JSON object", schemas.CodeInvalidArgs)
	}
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("%w: args are not valid UTF-8 (first bad byte at offset %d)", schemas.CodeInvalidArgs, firstInvalidUTF8(raw))
	}
	if err := checkShape(raw); err != nil {
		return nil, fmt.Errorf("%w: %w", schemas.CodeInvalidArgs, err)
	}
	return raw, nil
}

// checkShape walks valid JSON and refuses nesting deeper than MaxArgsDepth
// and numbers with more than MaxNumberDigits digits in a row.
func checkShape(raw []byte) error {
	depth, digits := 0, 0
	inString, escaped := false, false
	for i, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c >= '0' && c <= '9' {
			if digits++; digits > MaxNumberDigits {
				return fmt.Errorf("a number at offset %d has more than %d digits", i-digits+1, MaxNumberDigits)
			}
			continue
		}
		digits = 0
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > MaxArgsDepth {
				return fmt.Errorf("args are nested more than %d levels deep (at offset %d)", MaxArgsDepth, i)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
