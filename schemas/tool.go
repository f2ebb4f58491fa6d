package schemas

import "encoding/json"

// ToolDescription describes one tool function the way an agent framework
// hands it to a model: its name, what it is for, and the JSON Schema of its
// arguments.
type ToolDescription struct {
	// Name is "module.function".
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the args object.
	Parameters json.RawMessage `json:"parameters"`
	// Source is "builtin" for the Go tools and "python" for tool files.
	Source string `json:"source"`
}
