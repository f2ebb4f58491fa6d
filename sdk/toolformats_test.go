package sdk_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	validator "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/executor/executortest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/jsonschema"
	"github.com/sandox/sandox/sdk"
)

// userTools is a user's tool file, loaded by the real Python tool host.
const userTools = `
def shout(text: str, times: int = 1) -> str:
    """Shout text.

    Args:
        text: what to shout.
        times: how often.
    """
    return " ".join([text.upper()] * times)
`

// attachInProcess starts a real executor in-process and returns an SDK
// handle on its sandbox.
func attachInProcess(t *testing.T) *sdk.Sandbox {
	t.Helper()
	sb := executortest.Start(t, "sb-formats", map[string]string{"user_tools.py": userTools})
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "g-formats"}, sdk.WithConn(sb.Conn))
	require.NoError(t, err)
	return g.Attach(sb.ID)
}

// compileShape compiles a JSON Schema of a format's published shape from
// testdata.
func compileShape(t *testing.T, file string) *validator.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	require.NoError(t, err)
	defer f.Close()
	doc, err := validator.UnmarshalJSON(f)
	require.NoError(t, err)
	c := validator.NewCompiler()
	require.NoError(t, c.AddResource(file, doc))
	s, err := c.Compile(file)
	require.NoError(t, err)
	return s
}

// compileParams checks that a tool's parameters are a valid JSON Schema
// (compiling validates it against the draft's meta-schema).
func compileParams(t *testing.T, name string, raw json.RawMessage) {
	t.Helper()
	doc, err := validator.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err, name)
	c := validator.NewCompiler()
	c.AssertFormat()
	url := "mem:///" + name + ".json"
	require.NoError(t, c.AddResource(url, doc), name)
	_, err = c.Compile(url)
	assert.NoError(t, err, "parameters of %s are not a valid JSON Schema", name)
}

func TestToolsAsMatchesEachPublishedShape(t *testing.T) {
	sb := attachInProcess(t)
	descs, err := sb.Tools(t.Context())
	require.NoError(t, err)
	require.NotEmpty(t, descs)

	tests := []struct {
		name   sdk.ToolFormat
		shape  string // testdata file; "" checks against sandox's own tool schema
		nameOf func(item map[string]any) string
		params func(item map[string]any) any
		mapped bool // names go through ModelToolName
	}{
		{
			name: sdk.FormatOpenAI, shape: "openai_tools.schema.json", mapped: true,
			nameOf: func(m map[string]any) string { return m["function"].(map[string]any)["name"].(string) },
			params: func(m map[string]any) any { return m["function"].(map[string]any)["parameters"] },
		},
		{
			name: sdk.FormatAnthropic, shape: "anthropic_tools.schema.json", mapped: true,
			nameOf: func(m map[string]any) string { return m["name"].(string) },
			params: func(m map[string]any) any { return m["input_schema"] },
		},
		{
			name: sdk.FormatMCP, shape: "mcp_tools.schema.json", mapped: true,
			nameOf: func(m map[string]any) string { return m["name"].(string) },
			params: func(m map[string]any) any { return m["inputSchema"] },
		},
		{
			name:   sdk.FormatJSONSchema,
			nameOf: func(m map[string]any) string { return m["name"].(string) },
			params: func(m map[string]any) any { return m["parameters"] },
		},
	}
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			data, err := sb.ToolsAs(t.Context(), tt.name)
			require.NoError(t, err)
			var items []map[string]any
			require.NoError(t, json.Unmarshal(data, &items))
			require.Len(t, items, len(descs))

			if tt.shape != "" {
				inst, err := validator.UnmarshalJSON(bytes.NewReader(data))
				require.NoError(t, err)
				assert.NoError(t, compileShape(t, tt.shape).Validate(inst))
			} else {
				for _, raw := range splitList(t, data) {
					assert.NoError(t, jsonschema.Validate("tool", raw))
				}
			}

			names, err := sdk.NewToolNames(descs)
			require.NoError(t, err)
			seen := map[string]bool{}
			for i, item := range items {
				got := tt.nameOf(item)
				want := descs[i].Name
				if tt.mapped {
					want = sdk.ModelToolName(descs[i].Name)
				}
				assert.Equal(t, want, got)
				assert.Equal(t, descs[i].Name, names.Resolve(got), "name %s does not map back", got)
				assert.False(t, seen[got], "name %s offered twice", got)
				seen[got] = true
				p, err := json.Marshal(tt.params(item))
				require.NoError(t, err)
				compileParams(t, got, p)
			}
			assert.True(t, seen[map[bool]string{true: "user_tools__shout", false: "user_tools.shout"}[tt.mapped]], "the user's tool is missing")
			assert.True(t, seen[map[bool]string{true: "filesystem_tools__read_file", false: "filesystem_tools.read_file"}[tt.mapped]], "a built-in tool is missing")
		})
	}
}

func splitList(t *testing.T, data []byte) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

func TestModelToolName(t *testing.T) {
	long := "user_tools." + strings.Repeat("a", 80)
	tests := []struct {
		name, tool, want string
	}{
		{name: "module and function", tool: "filesystem_tools.read_file", want: "filesystem_tools__read_file"},
		{name: "dashes kept", tool: "my-tools.go", want: "my-tools__go"},
		{name: "other characters replaced", tool: "a b.c/d", want: "a_b__c_d"},
		{name: "empty", tool: "", want: "_"},
		{name: "long name hashed", tool: long, want: sdk.ModelToolName(long)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sdk.ModelToolName(tt.tool)
			assert.Equal(t, tt.want, got)
			assert.Regexp(t, `^[a-zA-Z0-9_-]{1,64}$`, got)
		})
	}
	other := "user_tools." + strings.Repeat("a", 79) + "b"
	assert.NotEqual(t, sdk.ModelToolName(long), sdk.ModelToolName(other), "two long names collide")
	assert.Len(t, sdk.ModelToolName(long), sdk.MaxModelToolName)
}

func TestToolNamesResolve(t *testing.T) {
	long := "user_tools." + strings.Repeat("x", 70)
	names, err := sdk.NewToolNames([]schemas.ToolDescription{{Name: "filesystem_tools.read_file"}, {Name: long}})
	require.NoError(t, err)
	tests := []struct {
		name, model, want string
	}{
		{name: "mapped", model: "filesystem_tools__read_file", want: "filesystem_tools.read_file"},
		{name: "hashed long name", model: sdk.ModelToolName(long), want: long},
		{name: "sandox spelling passes", model: "terminal_tools.run", want: "terminal_tools.run"},
		{name: "unknown mapped by rule", model: "terminal_tools__run", want: "terminal_tools.run"},
		{name: "bare function passes", model: "run", want: "run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, names.Resolve(tt.model))
		})
	}
	_, err = sdk.NewToolNames([]schemas.ToolDescription{{Name: "a.b__c"}, {Name: "a__b.c"}})
	assert.ErrorIs(t, err, sdk.ErrBadRequest)
}

func TestToolCallActions(t *testing.T) {
	names, err := sdk.NewToolNames([]schemas.ToolDescription{{Name: "filesystem_tools.read_file"}})
	require.NoError(t, err)
	tests := []struct {
		name     string
		call     sdk.ToolCall
		wantTool string
		wantArgs string
		wantErr  bool
	}{
		{name: "openai string arguments", call: sdk.ToolCall{ID: "call_1", Name: "filesystem_tools__read_file", Arguments: json.RawMessage(`"{\"path\":\"a.txt\"}"`)}, wantTool: "filesystem_tools.read_file", wantArgs: `{"path":"a.txt"}`},
		{name: "anthropic object input", call: sdk.ToolCall{ID: "toolu_1", Name: "filesystem_tools__read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}, wantTool: "filesystem_tools.read_file", wantArgs: `{"path":"a.txt"}`},
		{name: "no arguments", call: sdk.ToolCall{Name: "terminal_tools.run"}, wantTool: "terminal_tools.run", wantArgs: `{}`},
		{name: "empty string arguments", call: sdk.ToolCall{Name: "x__y", Arguments: json.RawMessage(`""`)}, wantTool: "x.y", wantArgs: `{}`},
		{name: "array arguments refused", call: sdk.ToolCall{Name: "x__y", Arguments: json.RawMessage(`[1]`)}, wantErr: true},
		{name: "broken JSON in string refused", call: sdk.ToolCall{Name: "x__y", Arguments: json.RawMessage(`"{\"path\":"`)}, wantErr: true},
		{name: "no name refused", call: sdk.ToolCall{Arguments: json.RawMessage(`{}`)}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := names.Action(tt.call)
			if tt.wantErr {
				assert.ErrorIs(t, err, sdk.ErrBadRequest)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantTool, a.Tool)
			assert.JSONEq(t, tt.wantArgs, string(a.Args))
			if tt.call.ID != "" {
				assert.Contains(t, a.Description, tt.call.ID)
			}
		})
	}
}

// TestModelToolCallsRunAsActions passes tool calls as a model writes them
// straight back to a real executor.
func TestModelToolCallsRunAsActions(t *testing.T) {
	sb := attachInProcess(t)
	descs, err := sb.Tools(t.Context())
	require.NoError(t, err)
	names, err := sdk.NewToolNames(descs)
	require.NoError(t, err)

	actions, err := names.Actions([]sdk.ToolCall{
		{ID: "call_1", Name: "filesystem_tools__write_file", Arguments: json.RawMessage(`"{\"path\":\"note.txt\",\"content\":\"hi there\"}"`)},
		{ID: "call_2", Name: "filesystem_tools__read_file", Arguments: json.RawMessage(`{"path":"note.txt"}`)},
		{ID: "call_3", Name: "user_tools__shout", Arguments: json.RawMessage(`{"text":"hey","times":2}`)},
		{ID: "call_4", Name: "filesystem_tools__read_file", Arguments: json.RawMessage(`{"path":"missing.txt"}`)},
	})
	require.NoError(t, err)
	obs, err := sb.SendActions(t.Context(), actions)
	require.NoError(t, err)
	require.Len(t, obs, 4)
	assert.Nil(t, obs[0].Error)
	assert.Contains(t, obs[1].Stdout, "hi there")
	assert.JSONEq(t, `"HEY HEY"`, string(obs[2].Return))
	require.NotNil(t, obs[3].Error)
	assert.Equal(t, "filesystem_tools.read_file", obs[3].Tool)
}

func TestExportToolsRefuses(t *testing.T) {
	tests := []struct {
		name   string
		tools  []schemas.ToolDescription
		format sdk.ToolFormat
	}{
		{name: "unknown format", tools: nil, format: "gemini"},
		{name: "parameters not an object schema", tools: []schemas.ToolDescription{{Name: "a.b", Parameters: json.RawMessage(`{"type":"string"}`)}}, format: sdk.FormatOpenAI},
		{name: "parameters not JSON object", tools: []schemas.ToolDescription{{Name: "a.b", Parameters: json.RawMessage(`[]`)}}, format: sdk.FormatMCP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sdk.ExportTools(tt.tools, tt.format)
			assert.ErrorIs(t, err, sdk.ErrBadRequest)
		})
	}
	got, err := sdk.ExportTools([]schemas.ToolDescription{{Name: "a.b"}}, sdk.FormatAnthropic)
	require.NoError(t, err)
	assert.JSONEq(t, `[{"name":"a__b","input_schema":{"type":"object","properties":{}}}]`, string(got))
}

// TestShapesRefuseWrongShapes shows that the shape schemas can fail: the
// mistakes an export could make are refused.
func TestShapesRefuseWrongShapes(t *testing.T) {
	tests := []struct {
		name, shape, doc string
	}{
		{name: "openai dotted name", shape: "openai_tools.schema.json", doc: `[{"type":"function","function":{"name":"a.b","parameters":{"type":"object"}}}]`},
		{name: "openai flat tool", shape: "openai_tools.schema.json", doc: `[{"type":"function","name":"a_b","parameters":{"type":"object"}}]`},
		{name: "openai name too long", shape: "openai_tools.schema.json", doc: `[{"type":"function","function":{"name":"` + strings.Repeat("a", 65) + `"}}]`},
		{name: "anthropic camel case schema", shape: "anthropic_tools.schema.json", doc: `[{"name":"a_b","inputSchema":{"type":"object"}}]`},
		{name: "anthropic non-object input", shape: "anthropic_tools.schema.json", doc: `[{"name":"a_b","input_schema":{"type":"string"}}]`},
		{name: "mcp snake case schema", shape: "mcp_tools.schema.json", doc: `[{"name":"a.b","input_schema":{"type":"object"}}]`},
		{name: "mcp name with slash", shape: "mcp_tools.schema.json", doc: `[{"name":"a/b","inputSchema":{"type":"object"}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, err := validator.UnmarshalJSON(strings.NewReader(tt.doc))
			require.NoError(t, err)
			assert.Error(t, compileShape(t, tt.shape).Validate(inst))
		})
	}
}
