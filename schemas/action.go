package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	invopop "github.com/invopop/jsonschema"
	orderedmap "github.com/pb33f/ordered-map/v2"
)

// Action is one tool call: the tool to run, why the agent calls it, and the
// arguments as a JSON object.
type Action struct {
	// Tool names the function, "module.function" (for example
	// "filesystem_tools.read_file") or a bare function name that exactly one
	// tool module defines. A trailing "Use" is tolerated and removed.
	Tool string `json:"tool"`
	// Description says why the agent makes the call. It is recorded, not run.
	Description string `json:"description,omitempty"`
	// Args holds the keyword arguments, a JSON object.
	Args json.RawMessage `json:"args,omitempty"`
}

// Actions is an ordered batch of tool calls. It decodes from either of the
// two wire forms and always keeps the order in which the calls were written:
//
//	{"filesystem_tools.read_file": {"description": "…", "args": {…}}, …}
//	[{"tool": "filesystem_tools.read_file", "description": "…", "args": {…}}, …]
//
// The object form is the user's; the list form lets one batch call the same
// tool twice. Actions encodes as the list form.
type Actions []Action

// ErrMalformedActions reports an action payload that is not one of the two
// accepted forms.
var ErrMalformedActions = errors.New("malformed action payload")

// ParseActions decodes and checks an action payload. Errors wrap
// ErrMalformedActions and say where the payload is wrong.
func ParseActions(data []byte) (Actions, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: empty payload", ErrMalformedActions)
	}
	var a Actions
	if err := json.Unmarshal(data, &a); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("%w: invalid JSON at byte %d: %w", ErrMalformedActions, syn.Offset, syn)
		}
		return nil, err
	}
	return a, nil
}

// UnmarshalJSON decodes the object or the list form, keeping the order.
func (a *Actions) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return fmt.Errorf("%w: empty payload", ErrMalformedActions)
	}
	var out Actions
	var err error
	switch data[0] {
	case '{':
		out, err = decodeActionObject(data)
	case '[':
		out, err = decodeActionList(data)
	default:
		return fmt.Errorf("%w: want a JSON object keyed by tool name or a list of actions", ErrMalformedActions)
	}
	if err != nil {
		return err
	}
	if len(out) == 0 {
		return fmt.Errorf("%w: no actions", ErrMalformedActions)
	}
	*a = out
	return nil
}

// MarshalJSON encodes the list form, which keeps order in every JSON library.
func (a Actions) MarshalJSON() ([]byte, error) {
	return json.Marshal([]Action(a))
}

// actionBody is the value of one key in the object form.
type actionBody struct {
	Description string          `json:"description"`
	Args        json.RawMessage `json:"args"`
}

// decodeActionObject walks the object token by token, because a Go map would
// lose the order the calls were written in.
func decodeActionObject(data []byte) (Actions, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // the opening brace
		return nil, syntaxErr(err)
	}
	var out Actions
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxErr(err)
		}
		key := tok.(string) // object keys are always strings
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxErr(err)
		}
		act, err := actionFromBody(key, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, act)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, syntaxErr(err)
	}
	return out, nil
}

func actionFromBody(key string, raw json.RawMessage) (Action, error) {
	if !isObject(raw) {
		return Action{}, fmt.Errorf("%w: action %q: value must be an object with \"description\" and \"args\"", ErrMalformedActions, key)
	}
	var body actionBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return Action{}, fmt.Errorf("%w: action %q: %w", ErrMalformedActions, key, err)
	}
	act := Action{Tool: key, Description: body.Description, Args: body.Args}
	return act, act.check()
}

func decodeActionList(data []byte) (Actions, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, syntaxErr(err)
	}
	out := make(Actions, 0, len(raws))
	for i, raw := range raws {
		if !isObject(raw) {
			return nil, fmt.Errorf("%w: action %d: must be an object with \"tool\", \"description\" and \"args\"", ErrMalformedActions, i)
		}
		var act Action
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&act); err != nil {
			return nil, fmt.Errorf("%w: action %d: %w", ErrMalformedActions, i, err)
		}
		if err := act.check(); err != nil {
			return nil, fmt.Errorf("action %d: %w", i, err)
		}
		out = append(out, act)
	}
	return out, nil
}

// check validates one action after decoding.
func (a Action) check() error {
	if a.Tool == "" {
		return fmt.Errorf("%w: an action has an empty tool name", ErrMalformedActions)
	}
	if len(a.Args) > 0 && !isObject(a.Args) && string(bytes.TrimSpace(a.Args)) != "null" {
		return fmt.Errorf("%w: action %q: \"args\" must be an object", ErrMalformedActions, a.Tool)
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func syntaxErr(err error) error {
	return fmt.Errorf("%w: invalid JSON: %w", ErrMalformedActions, err)
}

// ToolName returns the canonical spelling of a tool reference: a trailing
// "Use" (the seed's "<function_name>Use") removed. Nothing else is changed:
// CheckToolRef refuses a reference with any other character than a tool
// name has.
func ToolName(ref string) string {
	if trimmed, ok := strings.CutSuffix(ref, "Use"); ok && trimmed != "" {
		return trimmed
	}
	return ref
}

// JSONSchema describes the two accepted forms of an action payload.
func (Actions) JSONSchema() *invopop.Schema {
	body := &invopop.Schema{
		Type: "object",
		Properties: newProps(
			"description", &invopop.Schema{Type: "string"},
			"args", &invopop.Schema{Type: "object"},
		),
		AdditionalProperties: invopop.FalseSchema,
	}
	item := &invopop.Schema{
		Type: "object",
		Properties: newProps(
			"tool", &invopop.Schema{Type: "string", MinLength: ptr(uint64(1))},
			"description", &invopop.Schema{Type: "string"},
			"args", &invopop.Schema{Type: "object"},
		),
		Required:             []string{"tool"},
		AdditionalProperties: invopop.FalseSchema,
	}
	return &invopop.Schema{
		Description: "An ordered batch of tool calls: an object keyed by tool name, or a list of actions.",
		OneOf: []*invopop.Schema{
			{Type: "object", MinProperties: ptr(uint64(1)), AdditionalProperties: body},
			{Type: "array", MinItems: ptr(uint64(1)), Items: item},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func newProps(kv ...any) *orderedmap.OrderedMap[string, *invopop.Schema] {
	m := orderedmap.New[string, *invopop.Schema]()
	for i := 0; i < len(kv); i += 2 {
		m.Set(kv[i].(string), kv[i+1].(*invopop.Schema))
	}
	return m
}
