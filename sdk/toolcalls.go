package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/sandox/sandox/schemas"
)

// ToolCall is a model's request to call one tool, as the model APIs return
// it: OpenAI's message.tool_calls[i] (id, function.name,
// function.arguments), Anthropic's tool_use block (id, name, input), or
// MCP's tools/call params (name, arguments).
type ToolCall struct {
	// ID is the model's id for the call, if any. It goes into the action's
	// description, so the recorded batch says which call it answers.
	ID string
	// Name is the tool's name as the model wrote it.
	Name string
	// Arguments is a JSON object, or a JSON string that holds one (OpenAI
	// sends its arguments as a string). Empty or null means no arguments.
	Arguments json.RawMessage
}

// Action turns a model's tool call into an action: the name is resolved
// with Resolve and the arguments are unwrapped to a JSON object. Errors wrap
// ErrBadRequest and say what is wrong with the arguments.
func (n *ToolNames) Action(call ToolCall) (schemas.Action, error) {
	if call.Name == "" {
		return schemas.Action{}, fmt.Errorf("%w: tool call %q has no name", ErrBadRequest, call.ID)
	}
	args, err := callArgs(call.Arguments)
	if err != nil {
		return schemas.Action{}, fmt.Errorf("%w: tool call %s (%s): %w", ErrBadRequest, call.Name, call.ID, err)
	}
	a := schemas.Action{Tool: n.Resolve(call.Name), Args: args}
	if call.ID != "" {
		a.Description = "model tool call " + call.ID
	}
	return a, nil
}

// Actions turns a model's tool calls into one batch, in the order the model
// made them. Errors are those of Action.
func (n *ToolNames) Actions(calls []ToolCall) (schemas.Actions, error) {
	out := make(schemas.Actions, 0, len(calls))
	for _, c := range calls {
		a, err := n.Action(c)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// callArgs returns the arguments as a JSON object.
func callArgs(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		raw = bytes.TrimSpace([]byte(s))
		if len(raw) == 0 {
			return json.RawMessage("{}"), nil
		}
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return nil, fmt.Errorf("arguments must be a JSON object, got %.80s", raw)
	}
	return raw, nil
}
