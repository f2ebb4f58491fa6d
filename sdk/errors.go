package sdk

import (
	"errors"
	"fmt"

	"github.com/sandox/sandox/schemas"
)

// The error classes. Every error the SDK returns for a refused request wraps
// one of them; test with errors.Is.
var (
	ErrBadRequest        = errors.New("bad request")         // the request is malformed or invalid
	ErrNotFound          = errors.New("not found")           // no such group or sandbox
	ErrAlreadyExists     = errors.New("already exists")      // the id is taken
	ErrConflict          = errors.New("conflict")            // wrong state for the call
	ErrSandboxGone       = errors.New("sandbox not running") // the sandbox does not answer
	ErrTimeout           = errors.New("timeout")             // a deadline passed
	ErrAccessDenied      = errors.New("access denied")
	ErrResourceExhausted = errors.New("resource exhausted") // a limit was hit or cannot be granted
	ErrUnsupported       = errors.New("unsupported")        // the host cannot do it
	ErrUnavailable       = errors.New("unavailable")        // the orchestrator or NATS is down
	ErrInternal          = errors.New("internal error")
	ErrClosed            = errors.New("closed") // the future or group was closed by its owner
)

var codeErrors = map[schemas.ErrorCode]error{
	schemas.CodeBadRequest:        ErrBadRequest,
	schemas.CodeInvalidArgs:       ErrBadRequest,
	schemas.CodeUnknownTool:       ErrBadRequest,
	schemas.CodeAmbiguousTool:     ErrBadRequest,
	schemas.CodeNotFound:          ErrNotFound,
	schemas.CodeAlreadyExists:     ErrAlreadyExists,
	schemas.CodeConflict:          ErrConflict,
	schemas.CodeTimeout:           ErrTimeout,
	schemas.CodeAccessDenied:      ErrAccessDenied,
	schemas.CodeResourceExhausted: ErrResourceExhausted,
	schemas.CodeUnsupported:       ErrUnsupported,
	schemas.CodeUnavailable:       ErrUnavailable,
	schemas.CodeInternal:          ErrInternal,
}

// Error is an error a sandox component answered with.
type Error struct {
	Code    schemas.ErrorCode
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Is matches the sentinel of the error's code.
func (e *Error) Is(target error) bool {
	s, ok := codeErrors[e.Code]
	return ok && s == target
}

func fromWire(e *schemas.Error) error {
	if e == nil {
		return nil
	}
	return &Error{Code: e.Code, Message: e.Message}
}
