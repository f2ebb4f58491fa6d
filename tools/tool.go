package tools

import (
	"context"
	"encoding/json"

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
