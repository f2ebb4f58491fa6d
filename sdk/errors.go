package sdk

import (
	"errors"

	"github.com/sandox/sandox/schemas"
)

// The error classes. Every error the SDK returns for a refused request wraps
// one of them; test with errors.Is. Those a component answers with are the
// wire codes themselves (schemas.ErrorCode, whose Error says the class in
// words: "not found"); ErrSandboxGone and ErrClosed are the SDK's own.
var (
	ErrBadRequest        error = schemas.CodeBadRequest            // the request is malformed or invalid
	ErrNotFound          error = schemas.CodeNotFound              // no such group or sandbox
	ErrAlreadyExists     error = schemas.CodeAlreadyExists         // the id is taken
	ErrConflict          error = schemas.CodeConflict              // wrong state for the call
	ErrSandboxGone             = errors.New("sandbox not running") // the sandbox does not answer
	ErrTimeout           error = schemas.CodeTimeout               // a deadline passed
	ErrAccessDenied      error = schemas.CodeAccessDenied
	ErrResourceExhausted error = schemas.CodeResourceExhausted // a limit was hit or cannot be granted
	ErrUnsupported       error = schemas.CodeUnsupported       // the host cannot do it
	ErrUnavailable       error = schemas.CodeUnavailable       // the orchestrator or NATS is down
	ErrInternal          error = schemas.CodeInternal
	ErrClosed                  = errors.New("closed") // the future or group was closed by its owner
	ErrPaused            error = schemas.CodePaused   // the sandbox is paused: Resume it first (docs/pause.md)
)

// badRequests are the codes that are also ErrBadRequest: a refused tool
// reference or arguments are a bad request too.
var badRequests = map[schemas.ErrorCode]bool{
	schemas.CodeInvalidArgs:   true,
	schemas.CodeUnknownTool:   true,
	schemas.CodeAmbiguousTool: true,
}

// Error is an error a sandox component answered with.
type Error struct {
	Code    schemas.ErrorCode
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Is matches the error's code, and ErrBadRequest for the codes of a refused
// tool reference or arguments.
func (e *Error) Is(target error) bool {
	c, ok := target.(schemas.ErrorCode)
	return ok && (c == e.Code || c == schemas.CodeBadRequest && badRequests[e.Code])
}

func fromWire(e *schemas.Error) error {
	if e == nil {
		return nil
	}
	return &Error{Code: e.Code, Message: e.Message}
}
