package schemas

import (
	"encoding/json"
	"errors"
	"io/fs"
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
