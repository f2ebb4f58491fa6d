package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errCause = errors.New("the cause")

func TestErrorIsClassAndCause(t *testing.T) {
	tests := []struct {
		name      string
		err       *Error
		class     ErrorCode
		causes    []error
		notCauses []error
		message   string
	}{
		{
			name:    "one cause",
			err:     Errorf(CodeBadRequest, "sandbox %s: %w", "sb-1", errCause),
			class:   CodeBadRequest,
			causes:  []error{errCause},
			message: "sandbox sb-1: the cause",
		},
		{
			name:    "two causes",
			err:     Errorf(CodeUnavailable, "%w: %w", fs.ErrNotExist, errCause),
			class:   CodeUnavailable,
			causes:  []error{fs.ErrNotExist, errCause},
			message: "file does not exist: the cause",
		},
		{
			name:      "no cause",
			err:       Errorf(CodeInternal, "printed, not wrapped: %v", errCause),
			class:     CodeInternal,
			notCauses: []error{errCause},
			message:   "printed, not wrapped: the cause",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.message, tt.err.Message)
			assert.ErrorIs(t, tt.err, tt.class)
			assert.NotErrorIs(t, tt.err, CodeNotFound, "another class")
			for _, c := range tt.causes {
				assert.ErrorIs(t, tt.err, c)
			}
			for _, c := range tt.notCauses {
				assert.NotErrorIs(t, tt.err, c)
			}
		})
	}
}

func TestErrorWrappedFurther(t *testing.T) {
	err := error(Errorf(CodeResourceExhausted, "compute.disk: %w", errCause))
	err = errors.Join(errors.New("create sandbox"), err)
	assert.ErrorIs(t, err, CodeResourceExhausted, "the class through another wrap")
	assert.ErrorIs(t, err, errCause, "the cause through another wrap")
	var we *Error
	require.ErrorAs(t, err, &we)
	assert.Equal(t, CodeResourceExhausted, we.Code)
}

func TestErrorCauseStaysHome(t *testing.T) {
	data, err := json.Marshal(Errorf(CodeNotFound, "group g: %w", errCause))
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":"not_found","message":"group g: the cause"}`, string(data))
	var back Error
	require.NoError(t, json.Unmarshal(data, &back))
	assert.ErrorIs(t, &back, CodeNotFound, "the class survives the wire")
	assert.NotErrorIs(t, &back, errCause, "the cause does not travel")
}

// TestErrorCodeIsAnError checks the codes as error classes: wrapped with
// fmt.Errorf, matched with errors.Is, found by CodeOf, said in words in
// messages and written as the code in JSON and logs.
func TestErrorCodeIsAnError(t *testing.T) {
	wrapped := fmt.Errorf("tool %q: %w", "x", CodeNotFound)
	assert.ErrorIs(t, wrapped, CodeNotFound)
	assert.NotErrorIs(t, wrapped, CodeBadRequest)
	assert.EqualError(t, wrapped, `tool "x": not found`)
	code, ok := CodeOf(wrapped)
	assert.True(t, ok)
	assert.Equal(t, CodeNotFound, code)

	code, ok = CodeOf(fmt.Errorf("outer: %w", Errorf(CodeConflict, "inner: %w", CodeNotFound)))
	assert.True(t, ok)
	assert.Equal(t, CodeConflict, code, "an *Error's code comes first")
	_, ok = CodeOf(errCause)
	assert.False(t, ok)
	_, ok = CodeOf(nil)
	assert.False(t, ok)

	words := map[ErrorCode]string{
		CodeBadRequest: "bad request", CodeNotFound: "not found", CodeAlreadyExists: "already exists",
		CodeInvalidArgs: "invalid arguments", CodeInternal: "internal error", CodeResourceExhausted: "resource exhausted",
		CodeToolError: "tool error", CodeTimeout: "timeout",
	}
	for c, w := range words {
		assert.EqualError(t, c, w)
	}
	for _, c := range ErrorCodes {
		assert.NotEmpty(t, c.Error())
		data, err := json.Marshal(c)
		require.NoError(t, err)
		assert.Equal(t, `"`+string(c)+`"`, string(data))
		var back ErrorCode
		require.NoError(t, json.Unmarshal(data, &back))
		assert.Equal(t, c, back)
	}
	assert.Equal(t, "not_found: gone", Errorf(CodeNotFound, "gone").Error(), "an *Error says its code")

	var text, js bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("m", "code", CodeNotFound)
	slog.New(slog.NewJSONHandler(&js, nil)).Info("m", "code", CodeNotFound)
	assert.Contains(t, text.String(), "code=not_found")
	assert.Contains(t, js.String(), `"code":"not_found"`)
}
