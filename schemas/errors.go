package schemas

import "fmt"

// ErrorCode is the stable, machine-readable class of an error on the wire.
// The SDK maps each code back to a Go sentinel error.
type ErrorCode string

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
)

// Error is an error as it travels on the wire: a stable code and a message
// for people.
type Error struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
}

// Error implements the error interface.
func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf builds a wire error with a formatted message.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
