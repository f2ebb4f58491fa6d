package executor

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/schemas"
)

func TestWireErrorKeepsTheCause(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		code    schemas.ErrorCode
		cause   error
		message string
	}{
		{"a tool's class", fmt.Errorf("read a.txt: %w", schemas.CodeInvalidArgs), schemas.CodeInvalidArgs, schemas.CodeInvalidArgs, "read a.txt: invalid arguments"},
		{"a deadline", fmt.Errorf("run: %w", context.DeadlineExceeded), schemas.CodeTimeout, context.DeadlineExceeded, "run: context deadline exceeded (the action ran past its time limit)"},
		{"anything else", errors.New("boom"), schemas.CodeToolError, nil, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			we := wireError(tt.err)
			assert.Equal(t, tt.code, we.Code)
			assert.Equal(t, tt.message, we.Message)
			assert.ErrorIs(t, we, tt.code, "the class")
			assert.ErrorIs(t, we, tt.err, "the error itself")
			if tt.cause != nil {
				assert.ErrorIs(t, we, tt.cause, "the cause")
			}
		})
	}
}
