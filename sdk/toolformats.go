package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/sandox/sandox/schemas"
)

// ToolFormat names a function-calling format that a sandbox's tools can be
// exported in.
type ToolFormat string

// The formats ExportTools writes.
const (
	// FormatOpenAI is the "tools" list of the OpenAI Chat Completions API:
	// {"type": "function", "function": {"name", "description", "parameters"}},
	// with names mapped by ModelToolName.
	FormatOpenAI ToolFormat = "openai"
	// FormatAnthropic is the "tools" list of the Anthropic Messages API:
	// {"name", "description", "input_schema"}, with names mapped by
	// ModelToolName.
	FormatAnthropic ToolFormat = "anthropic"
	// FormatMCP is a list of Model Context Protocol Tool objects:
	// {"name", "description", "inputSchema"}, with names mapped by
	// ModelToolName: the MCP specification allows dots, but clients that
	// pass the names on to a model API (Claude Desktop, Copilot CLI, Codex)
	// refuse them.
	FormatMCP ToolFormat = "mcp"
	// FormatJSONSchema is sandox's own tool description
	// (schemas/jsonschema/tool.schema.json): {"name", "description",
	// "parameters", "source"}, names unchanged.
	FormatJSONSchema ToolFormat = "jsonschema"
)

// ToolFormats lists every format, in the order the CLI documents them.
var ToolFormats = []ToolFormat{FormatOpenAI, FormatAnthropic, FormatMCP, FormatJSONSchema}

// ParseToolFormat returns the format named s, or an error wrapping
// ErrBadRequest.
func ParseToolFormat(s string) (ToolFormat, error) {
	for _, f := range ToolFormats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w: unknown tool format %q (want openai, anthropic, mcp or jsonschema)", ErrBadRequest, s)
}

// OpenAITool is one entry of the Chat Completions API's "tools" list.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function an OpenAITool offers.
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// AnthropicTool is one entry of the Messages API's "tools" list.
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// MCPTool is a Model Context Protocol Tool definition, as tools/list
// answers it.
type MCPTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ExportTools converts tool descriptions to format f and returns the JSON
// list, ready to be put in a model request. Errors wrap ErrBadRequest: an
// unknown format, two tools that map to the same model name, or a tool
// whose parameters are not a JSON Schema of an object.
func ExportTools(tools []schemas.ToolDescription, f ToolFormat) (json.RawMessage, error) {
	if _, err := ParseToolFormat(string(f)); err != nil {
		return nil, err
	}
	if _, err := NewToolNames(tools); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(tools))
	for _, t := range tools {
		params, err := ObjectSchema(t.Parameters)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %s: %w", ErrBadRequest, t.Name, err)
		}
		switch f {
		case FormatOpenAI:
			out = append(out, OpenAITool{Type: "function", Function: OpenAIFunction{Name: ModelToolName(t.Name), Description: t.Description, Parameters: params}})
		case FormatAnthropic:
			out = append(out, AnthropicTool{Name: ModelToolName(t.Name), Description: t.Description, InputSchema: params})
		case FormatMCP:
			out = append(out, MCPTool{Name: ModelToolName(t.Name), Description: t.Description, InputSchema: params})
		case FormatJSONSchema:
			t.Parameters = params
			out = append(out, t)
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("%w: encode tools: %w", ErrInternal, err)
	}
	return data, nil
}

// ObjectSchema returns a tool's parameter schema as every format wants it:
// a JSON object whose "type" is "object". An empty or null schema becomes
// {"type":"object","properties":{}}, the shape the APIs document for a
// function without arguments; a schema without "type" gets
// "type":"object". It fails for a schema that is not a JSON object or whose
// type is something else.
func ObjectSchema(params json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(params)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return nil, fmt.Errorf("parameters are not a JSON object: %w", err)
	}
	typ, ok := m["type"]
	if !ok {
		m["type"] = json.RawMessage(`"object"`)
		return json.Marshal(m)
	}
	if string(bytes.TrimSpace(typ)) != `"object"` {
		return nil, fmt.Errorf("parameters have type %s, want \"object\"", typ)
	}
	return trimmed, nil
}

// ToolsAs returns the sandbox's tools in format f (see ExportTools). It
// blocks for one request to the sandbox, with the errors of Tools.
func (s *Sandbox) ToolsAs(ctx context.Context, f ToolFormat) (json.RawMessage, error) {
	if _, err := ParseToolFormat(string(f)); err != nil {
		return nil, err
	}
	tools, err := s.Tools(ctx)
	if err != nil {
		return nil, err
	}
	return ExportTools(tools, f)
}
