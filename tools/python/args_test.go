package python

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nested returns {"name": v} with v nested so that the whole object is
// depth levels deep.
func nested(depth int) string {
	return `{"name":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
}

// TestBadArgsKeepTheHost checks that arguments Python's json module cannot
// read are refused with invalid_args before they reach the host, so that
// the host, and the state of every module, lives on.
func TestBadArgsKeepTheHost(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	tests := []struct {
		name, args, want string
	}{
		{"invalid UTF-8", "{\"name\":\"caf\xe9\"}", "not valid UTF-8"},
		{"invalid UTF-8 in a key", "{\"n\xffme\":\"x\"}", "not valid UTF-8"},
		{"5000 levels deep", nested(5000), "nested more than 100 levels"},
		{"one level past the limit", nested(MaxArgsDepth + 1), "nested more than 100 levels"},
		{"an integer of 5000 digits", `{"name":` + strings.Repeat("7", 5000) + `}`, "more than 4300 digits"},
	}
	res, err := call(t, h, "basic.count", `{}`)
	require.NoError(t, err)
	calls := 1
	require.JSONEq(t, "1", string(res.Return))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t, h, "basic.greet", tt.args)
			require.ErrorIs(t, err, schemas.CodeInvalidArgs)
			assert.Contains(t, err.Error(), tt.want)
			res, err := call(t, h, "basic.count", `{}`)
			require.NoError(t, err)
			calls++
			assert.JSONEq(t, fmt.Sprint(calls), string(res.Return), "the host must keep its state: got a restarted count")
		})
	}
}

// TestArgsAtTheLimits checks that arguments right at the limits reach the
// function.
func TestArgsAtTheLimits(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	tests := []struct{ name, args string }{
		{"100 levels deep", nested(MaxArgsDepth)},
		{"an integer of 4300 digits", `{"name":` + strings.Repeat("7", MaxNumberDigits) + `}`},
		{"brackets and quotes inside a string", `{"name":"` + strings.Repeat(`[{\"`, 500) + `"}`},
		{"non-ASCII text", `{"name":"café ☕ \ud83d\ude00"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(t, h, "basic.greet", tt.args)
			require.NoError(t, err)
			assert.Contains(t, string(res.Return), "greeted")
		})
	}
}
