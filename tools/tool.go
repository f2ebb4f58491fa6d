package tools

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/sandox/sandox/schemas"
)

// Result is what a tool call produced. A call that fails returns its error
// together with a Result carrying the output it wrote before failing.
type Result struct {
	Stdout string
	Stderr string
	// StillRunning is true when a terminal command outlived its soft timeout.
	StillRunning bool
	// ExitCode is set when a terminal command finished.
	ExitCode *int
	// Return is a JSON value (Python tools' return values).
	Return json.RawMessage
}

// Func is the body of a tool: it takes the raw JSON args object.
type Func func(ctx context.Context, args json.RawMessage) (Result, error)

// Tool is one callable tool function.
type Tool struct {
	// Module is the tool module, for example "filesystem_tools".
	Module string
	// Name is the function name, for example "read_file".
	Name string
	// Description says what the tool is for, for a model to read.
	Description string
	// Parameters is the JSON Schema of the args object, when it is known
	// up front (a Python tool's comes from its host).
	Parameters json.RawMessage
	// parameters makes it on first use (New's, reflected from the args
	// struct): an executor that nobody asks for its tool list never
	// reflects the ~40 argument types of the built-in families.
	parameters func() json.RawMessage
	// Source is "builtin" or "python".
	Source string
	// Call runs the tool.
	Call Func
}

// FullName is "module.function".
func (t Tool) FullName() string { return t.Module + "." + t.Name }

// Schema returns the JSON Schema of the args object.
func (t Tool) Schema() json.RawMessage {
	if t.Parameters == nil && t.parameters != nil {
		return t.parameters()
	}
	return t.Parameters
}

// Describe returns the tool's machine-readable description.
func (t Tool) Describe() schemas.ToolDescription {
	return schemas.ToolDescription{
		Name:        t.FullName(),
		Description: t.Description,
		Parameters:  t.Schema(),
		Source:      t.Source,
	}
}

// A tool's error is classed by the one set of error classes,
// schemas.ErrorCode: it wraps a code with the detail the caller lacks
// (fmt.Errorf("%w: old_string occurs twice", schemas.CodeInvalidArgs), or
// "permission denied: %w" with schemas.CodeAccessDenied, or
// schemas.CodeUnsupported), and the executor sends that code in the
// observation. The two classes below have no code of their own: on the
// wire they are tool_error, as any error a tool returns unclassified.
var (
	// ErrNotFound: a file, directory, session or process does not exist.
	// It is not schemas.CodeNotFound, which says a group or a sandbox does
	// not exist: a missing file is tool_error on the wire.
	ErrNotFound = errors.New("not found")
	// ErrTooLarge: the input or output exceeds a limit.
	ErrTooLarge = errors.New("too large")
)

// ErrorCode returns the wire code of an error a tool returned: its class
// (schemas.CodeOf), else timeout for a passed deadline, else tool_error.
func ErrorCode(err error) schemas.ErrorCode {
	if c, ok := schemas.CodeOf(err); ok {
		return c
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return schemas.CodeTimeout
	}
	return schemas.CodeToolError
}
