package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrorCode is the stable, machine-readable class of an error on the wire,
// and the one set of error classes in process, in the manner of
// containerd's errdefs: a code is itself an error, so a component wraps it
// with the detail the caller lacks,
//
//	fmt.Errorf("tool %q: %w", name, schemas.CodeNotFound)
//
// and errors.Is(err, schemas.CodeNotFound) tests the class, of such an
// error or of an *Error with that code. CodeOf gives the class of an error.
// The SDK's sentinels (sdk.ErrNotFound, …) are these values.
type ErrorCode string

// Error implements the error interface. It says the class in words ("not
// found", "invalid arguments"), for messages that wrap it; the code itself
// is the string value, which is what JSON and logs carry (MarshalText,
// MarshalJSON).
func (c ErrorCode) Error() string {
	switch c {
	case CodeInvalidArgs:
		return "invalid arguments"
	case CodeInternal:
		return "internal error"
	}
	return strings.ReplaceAll(string(c), "_", " ")
}

// MarshalText returns the code, so that text encodings (and log/slog's
// text handler) write "not_found", not the words Error says.
func (c ErrorCode) MarshalText() ([]byte, error) { return []byte(c), nil }

// MarshalJSON returns the code as a JSON string, so that log/slog's JSON
// handler writes the code rather than the words Error says.
func (c ErrorCode) MarshalJSON() ([]byte, error) { return json.Marshal(string(c)) }

// CodeOf returns the class of err: the code of the first *Error in its
// chain, else the first ErrorCode it wraps; false when it has neither.
func CodeOf(err error) (ErrorCode, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	var c ErrorCode
	if errors.As(err, &c) {
		return c, true
	}
	return "", false
}

// The error codes. New codes may be added; existing ones never change meaning.
const (
	CodeBadRequest        ErrorCode = "bad_request"        // a malformed or invalid message
	CodeNotFound          ErrorCode = "not_found"          // no such group or sandbox
	CodeAlreadyExists     ErrorCode = "already_exists"     // the id is taken
	CodeConflict          ErrorCode = "conflict"           // the object is in the wrong state for the command
	CodeUnknownTool       ErrorCode = "unknown_tool"       // no tool module defines the function
	CodeAmbiguousTool     ErrorCode = "ambiguous_tool"     // a bare name that several modules define
	CodeInvalidArgs       ErrorCode = "invalid_args"       // arguments that do not fit the tool
	CodeToolError         ErrorCode = "tool_error"         // the tool ran and failed
	CodeTimeout           ErrorCode = "timeout"            // a deadline passed
	CodeSkipped           ErrorCode = "skipped"            // not run: an earlier action failed and the batch stops on failure
	CodeAccessDenied      ErrorCode = "access_denied"      // the sandbox was not granted this
	CodeResourceExhausted ErrorCode = "resource_exhausted" // a limit was hit or cannot be granted
	CodeUnsupported       ErrorCode = "unsupported"        // the host cannot do what was asked
	CodeUnavailable       ErrorCode = "unavailable"        // a component is down or not ready
	CodeInternal          ErrorCode = "internal"           // a bug or an unexpected failure
	CodePaused            ErrorCode = "paused"             // the sandbox is paused: resume it first (docs/pause.md)
)

// Error is an error as it travels on the wire: a stable code and a message
// for people. In process it also keeps the error it was built from, if any:
// errors.Is and errors.As see both its class (the code) and that cause. The
// cause does not travel; its text is part of the message.
type Error struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
	cause   error
}

// Error implements the error interface.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Is reports whether target is e's class, its ErrorCode.
func (e *Error) Is(target error) bool {
	c, ok := target.(ErrorCode)
	return ok && c == e.Code
}

// Unwrap returns the errors that format wrapped with %w in Errorf, or nil.
func (e *Error) Unwrap() error { return e.cause }

// Errorf builds a wire error with a formatted message. Like fmt.Errorf, it
// wraps the operands of %w verbs: errors.Is(err, cause) holds for each.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	e := &Error{Code: code, Message: err.Error()}
	if errors.Unwrap(err) != nil {
		e.cause = err
	} else if multi, ok := err.(interface{ Unwrap() []error }); ok && len(multi.Unwrap()) > 0 {
		e.cause = err
	}
	return e
}
