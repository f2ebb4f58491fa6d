package tools

import (
	"context"
	"errors"

	"github.com/sandox/sandox/schemas"
)

// A tool's error is classed by the one set of error classes,
// schemas.ErrorCode: it wraps a code with the detail the caller lacks
// (fmt.Errorf("%w: old_string occurs twice", schemas.CodeInvalidArgs), or
// "permission denied: %w" with schemas.CodeAccessDenied, or
// schemas.CodeUnsupported), and the executor sends that code in the
// observation (ErrorCode).
//
// ErrNotFound and ErrTooLarge are two finer classes of one code,
// schemas.CodeToolError, which each wraps directly: errors.Is matches the
// class itself and its code, schemas.CodeOf finds tool_error, and the
// error's text says the class in its own words ("not found", "too
// large").
var (
	// ErrNotFound: a file, directory, session, job or process does not
	// exist. It is tool_error on the wire, not schemas.CodeNotFound, which
	// says that a group or a sandbox does not exist.
	ErrNotFound error = &toolErrorClass{words: "not found"}
	// ErrTooLarge: the input or output exceeds a limit.
	ErrTooLarge error = &toolErrorClass{words: "too large"}
)

// toolErrorClass is a class of tool_error with words of its own.
type toolErrorClass struct{ words string }

// Error returns the class in words.
func (c *toolErrorClass) Error() string { return c.words }

// Unwrap returns the class's code, schemas.CodeToolError.
func (c *toolErrorClass) Unwrap() error { return schemas.CodeToolError }

// ErrorCode returns the wire code of an error a tool returned: the code of
// a *schemas.Error in it, else the code it wraps when that is not
// tool_error, else timeout for a passed deadline, else tool_error. A
// deadline passed while looking for something (ErrNotFound, which wraps
// tool_error) is timeout too.
func ErrorCode(err error) schemas.ErrorCode {
	var e *schemas.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if c, ok := schemas.CodeOf(err); ok && c != schemas.CodeToolError {
		return c
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return schemas.CodeTimeout
	}
	return schemas.CodeToolError
}
